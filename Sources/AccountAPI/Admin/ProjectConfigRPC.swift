import AccountCore
import Foundation
import HTTPTypes

/// `GET|PATCH /v2/projects/{p}/config` (mfa-phone-tenants.md §0.4), admin only: the project
/// configuration resource, a view over the server's configuration (`signIn.email`,
/// `authorizedDomains`…, set by its environment) and the members stored through this resource
/// (`signIn.phoneNumber`, `smsRegionConfig`, `mfa`…).
enum ProjectConfigRPC {
    static func endpoint(_ service: ProjectConfigService, settings: ProjectSettings) -> RPCEndpoint {
        RPCEndpoint(anyMethod: true, access: .adminOnly) { call in
            switch (call.method, call.resource) {
            case (.get, nil):
                return WireEncoding.response(json: wire(try await service.current(), settings: settings))
            case (.patch, nil):
                let mask = call.query["updateMask"].map {
                    $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                }
                try checkServerMembers(call.body.fields, mask: mask, settings: settings)
                return WireEncoding.response(json: wire(try await service.patch(call.body.fields, mask: mask), settings: settings))
            default:
                throw APIError.notFound
            }
        }
    }

    /// The members that are views of the server's environment, with the variable that sets each.
    private static let serverMembers: [(path: String, variable: String)] = [
        ("signIn.email", "both email sign-in methods are always on in this version"),
        ("signIn.anonymous", "ACCOUNTD_ALLOW_ANONYMOUS"),
        ("emailPrivacyConfig", "ACCOUNTD_EMAIL_ENUMERATION_PROTECTION"),
    ]

    /// A PATCH may restate the server's members but not change them: they are set by its
    /// environment in this version. `allowDuplicateEmails: true` is never possible (§4.11).
    private static func checkServerMembers(_ body: [String: JSONValue], mask: [String]?, settings: ProjectSettings) throws {
        let given = JSONValue.object(body)
        if given.value(at: "signIn.allowDuplicateEmails") == .bool(true) {
            throw AccountError(.invalidConfig, "allowDuplicateEmails is not supported by this server.")
        }
        let current = serverView(settings)
        for (path, variable) in serverMembers {
            let masked = mask.map { $0.contains { $0 == path || $0.hasPrefix(path + ".") || path.hasPrefix($0 + ".") } } ?? true
            guard masked, let value = given.value(at: path), !matches(value, current.value(at: path)) else { continue }
            throw AccountError(.invalidConfig, "\(path) is set by the server's configuration (\(variable)).")
        }
    }

    /// Whether a restated member says what the server has (members it leaves out are not changes).
    private static func matches(_ given: JSONValue, _ current: JSONValue?) -> Bool {
        guard case .object(let members) = given else { return given == current }
        return members.allSatisfy { key, value in matches(value, current?.value(at: key)) }
    }

    /// The members the server's environment sets.
    private static func serverView(_ settings: ProjectSettings) -> JSONValue {
        .object([
            "signIn": .object([
                "email": .object([
                    "enabled": .bool(settings.allowPasswordSignup), "passwordRequired": .bool(!settings.emailLinkSignin),
                ]),
                "anonymous": .object(["enabled": .bool(settings.allowAnonymous)]),
                "allowDuplicateEmails": .bool(false),
            ]),
            "emailPrivacyConfig": .object(["enableImprovedEmailPrivacy": .bool(settings.emailEnumerationProtection)]),
            "authorizedDomains": .array(settings.authorizedDomains.map(JSONValue.string)),
        ])
    }

    /// The resource: the server's members, then the stored ones over their defaults.
    static func wire(_ document: ProjectConfigDocument, settings: ProjectSettings) -> JSONValue {
        var config = serverView(settings)
        // Defaults of the stored members, then what is stored, then the output-only members.
        _ = config.set("signIn.phoneNumber", to: .object(["enabled": .bool(false)]))
        _ = config.set("mfa", to: .object(["state": .string("DISABLED")]))
        _ = config.set("multiTenant", to: .object(["allowTenants": .bool(false)]))
        _ = config.set("smsRegionConfig", to: .object([:]))
        for path in ProjectConfigDocument.storedRoots {
            if let value = document.stored.value(at: path) { _ = config.set(path, to: value) }
        }
        // A window of 0 is proto3's default: omitted from the output [FB-obs], stored as 0.
        if case .array(var providers)? = config.value(at: "mfa.providerConfigs") {
            for index in providers.indices where providers[index].value(at: "totpProviderConfig.adjacentIntervals") == .int(0) {
                _ = providers[index].set("totpProviderConfig.adjacentIntervals", to: nil)
            }
            _ = config.set("mfa.providerConfigs", to: .array(providers))
        }
        _ = config.set("name", to: .string("projects/\(settings.projectNumber)/config"))
        _ = config.set(
            "notification.sendSms.smsTemplate.content", to: .string("%LOGIN_CODE% is your verification code for %APP_NAME%."))
        _ = config.set("client.apiKey", to: .string(settings.linkAPIKey))
        return config
    }
}
