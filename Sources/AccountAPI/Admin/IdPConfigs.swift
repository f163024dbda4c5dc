import AccountCore
import Foundation
import HTTPTypes

/// `/v2/projects/{p}/oauthIdpConfigs[/{id}]` and `…/defaultSupportedIdpConfigs[/{id}]`
/// (federation-and-limits.md §B.2): the Admin SDK's provider-config calls. Admin only; output in
/// proto3 JSON (false and empty members omitted), secrets never returned.
enum IdPConfigsRPC {
    static func endpoint(_ service: IdPConfigService, _ collection: IdPConfigService.Collection) -> RPCEndpoint {
        let listKey = collection == .oidc ? "oauthIdpConfigs" : "defaultSupportedIdpConfigs"
        return RPCEndpoint(anyMethod: true, access: .adminOnly) { call in
            let project = service.settings.projectNumber
            switch (call.method, call.resource) {
            case (.post, nil):
                let id = call.query[collection == .oidc ? "oauthIdpConfigId" : "idpId"]
                let created = try await service.create(collection, id: id, body: call.body.fields)
                return WireEncoding.response(json: wire(created, project: project))
            case (.get, nil):
                let (configs, next) = try await service.list(
                    collection, pageSize: call.query["pageSize"].flatMap { Int($0) }, pageToken: call.query["pageToken"])
                var page: [String: JSONValue] = [:]
                if !configs.isEmpty { page[listKey] = .array(configs.map { wire($0, project: project) }) }
                if let next { page["nextPageToken"] = .string(next) }
                return WireEncoding.response(json: .object(page))
            case (.get, let id?):
                return WireEncoding.response(json: wire(try await service.get(collection, id: id), project: project))
            case (.patch, let id?):
                let mask = call.query["updateMask"].map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
                let updated = try await service.update(collection, id: id, body: call.body.fields, mask: mask)
                return WireEncoding.response(json: wire(updated, project: project))
            case (.delete, let id?):
                try await service.delete(collection, id: id)
                return WireEncoding.response(json: .object([:]))
            default:
                throw APIError.notFound
            }
        }
    }

    /// `GET /v2/defaultSupportedIdps`: what accountd verifies.
    static func supported() -> RPCEndpoint {
        RPCEndpoint(method: .get, access: .adminOnly) { _ in
            WireEncoding.response(
                json: .object([
                    "defaultSupportedIdps": .array(IdPConfigService.defaultSupportedIDs.map { .object(["idpId": .string($0)]) })
                ]))
        }
    }

    /// The resource as the Admin SDKs read it.
    static func wire(_ config: IdPConfig, project: String) -> JSONValue {
        var object: [String: JSONValue] = [
            "name": .string(
                "projects/\(project)/\(config.isDefaultSupported ? "defaultSupportedIdpConfigs" : "oauthIdpConfigs")/\(config.providerID)"),
            "clientId": .string(config.clientID),
        ]
        if let displayName = config.displayName { object["displayName"] = .string(displayName) }
        if config.enabled { object["enabled"] = .bool(true) }
        if !config.isDefaultSupported {
            object["issuer"] = config.issuer.map(JSONValue.string)
            object["responseType"] = .object(config.codeFlow ? ["code": .bool(true)] : ["idToken": .bool(true)])
        }
        if let apple = config.apple {
            var signIn: [String: JSONValue] = [:]
            if !apple.bundleIDs.isEmpty { signIn["bundleIds"] = .array(apple.bundleIDs.map(JSONValue.string)) }
            if let team = apple.teamID, let key = apple.keyID {
                signIn["codeFlowConfig"] = .object(["teamId": .string(team), "keyId": .string(key)])
            }
            if !signIn.isEmpty { object["appleSignInConfig"] = .object(signIn) }
        }
        var options: [String: JSONValue] = [:]
        let set = config.options
        if !set.additionalClientIDs.isEmpty { options["additionalClientIds"] = .array(set.additionalClientIDs.map(JSONValue.string)) }
        if let domains = set.trustedEmailDomains, !domains.isEmpty {
            options["trustedEmailDomains"] = .array(domains.map(JSONValue.string))
        }
        if config.providerID == "google.com" && !set.trustHostedDomain { options["trustHostedDomain"] = .bool(false) }
        if let scopes = set.scopes, !scopes.isEmpty { options["scopes"] = .array(scopes.map(JSONValue.string)) }
        for (name, value) in [
            ("discoveryUrl", set.discoveryURL), ("jwksUri", set.jwksURI), ("authorizationEndpoint", set.authorizationEndpoint),
            ("tokenEndpoint", set.tokenEndpoint),
        ] {
            if let value { options[name] = .string(value) }
        }
        if config.clientSecret != nil { options["clientSecretSet"] = .bool(true) }
        if !options.isEmpty { object["accountdOptions"] = .object(options) }
        return .object(object)
    }
}
