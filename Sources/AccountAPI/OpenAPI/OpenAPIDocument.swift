package import AccountCore
import Foundation
import HTTPTypes

/// The OpenAPI 3.1 document of what one listener serves, made from its route table: every RPC at
/// each URL path ``APIPath`` resolves to it (host-prefixed spellings and the legacy v3 names of v1
/// RPCs are aliases, not listed), the token route, and the fixed routes, each with the schemas of
/// ``OpenAPISchemas``. Per listener (``Listener``):
///
/// - `.admin`: every RPC, unscoped and project-scoped, for an admin bearer; no token route, no action page.
/// - `.publicOnly`: the RPCs clients may call (``RPCEndpoint/Access/clientOrAdmin``), unscoped only,
///   for an API key; the token route and the fixed routes.
/// - `.combined`: everything; unscoped client RPCs for an API key or an admin bearer, the rest for an admin.
///
/// Fixed routes need no credentials.
package enum OpenAPIDocument {
    /// The document of what `listener` serves of `routes`, for a server of `version`. With
    /// `projectID`, the `{project}` path parameter allows that project only (any other is refused).
    package static func document(routes: APIRoutes, listener: Listener, version: String, projectID: String? = nil) -> JSONValue {
        var builder = Builder(listener: listener)
        for (name, endpoint) in routes.rpcs.sorted(by: { $0.key < $1.key }) {
            builder.addRPC(name, endpoint)
        }
        if listener.servesClients, let token = routes.token {
            builder.addToken(token)
        }
        for (path, route) in routes.fixed.sorted(by: { $0.key < $1.key }) {
            // The admin listener has no action page, whatever its table holds.
            if listener == .admin && path.hasPrefix(ActionHandler.path) { continue }
            builder.addFixed(path, route)
        }
        return builder.document(version: version, projectID: projectID)
    }

    /// One URL form of an RPC: its path template and what the path carries.
    struct Form: Equatable {
        /// The path, `{project}` and `{id}` for the parameters.
        var path: String
        /// Whether the path names the project (admins only).
        var scoped: Bool
        /// Whether the path names one resource of a collection.
        var resource: Bool
        /// The operation id's suffix (`_project`, `_admin`, `_resource`).
        var suffix: String
    }

    /// The URL forms ``APIPath`` resolves to the RPC `name`: the candidates of its name's kind,
    /// each kept only if it resolves to `name` with the project and resource it carries.
    static func forms(of name: String) -> [Form] {
        var candidates: [Form] = []
        if !name.contains("/") {
            candidates = [
                Form(path: "/v1/accounts:\(name)", scoped: false, resource: false, suffix: ""),
                Form(path: "/v1/projects/{project}/accounts:\(name)", scoped: true, resource: false, suffix: "_project"),
            ]
            // Admin create, and the session cookie's own path (APIPath).
            if name == "signUp" {
                candidates.append(Form(path: "/v1/projects/{project}/accounts", scoped: true, resource: false, suffix: "_admin"))
            }
            if name == "createSessionCookie" {
                candidates.append(Form(path: "/v1/projects/{project}:createSessionCookie", scoped: true, resource: false, suffix: "_admin"))
            }
        } else if name.hasPrefix("v1/") || name.hasPrefix("v2/") {
            let version = name.prefix(2)
            let rest = name.dropFirst(3)
            candidates = [
                Form(path: "/\(name)", scoped: false, resource: false, suffix: ""),
                Form(path: "/\(version)/projects/{project}/\(rest)", scoped: true, resource: false, suffix: "_project"),
                Form(path: "/\(version)/projects/{project}/\(rest)/{id}", scoped: true, resource: true, suffix: "_resource"),
            ]
        } else if name.hasPrefix("v3/") {
            candidates = [Form(path: "/identitytoolkit/v3/relyingparty/\(name.dropFirst(3))", scoped: false, resource: false, suffix: "")]
        }
        return candidates.filter { form in
            let concrete = form.path.replacingOccurrences(of: "{project}", with: "p").replacingOccurrences(of: "{id}", with: "r")
            return APIPath(concrete) == .rpc(name: name, project: form.scoped ? "p" : nil, resource: form.resource ? "r" : nil)
        }
    }

    /// The document under construction.
    private struct Builder {
        let listener: Listener
        /// Path → method (lower-case) → operation.
        var paths: [String: [String: JSONValue]] = [:]
        var operationIDs: Set<String> = []
        var tags: Set<String> = []

        init(listener: Listener) {
            self.listener = listener
        }

        static let clientSecurity: [JSONValue] = [.object(["apiKey": .array([])]), .object(["apiKeyHeader": .array([])])]
        static let adminSecurity: [JSONValue] = [.object(["adminBearer": .array([])])]

        /// Who may call an RPC at `form` on this listener, or nil when this listener does not serve it there.
        func callers(_ endpoint: RPCEndpoint, _ form: Form) -> [JSONValue]? {
            switch listener {
            case .admin:
                return Self.adminSecurity
            case .publicOnly:
                guard endpoint.access == .clientOrAdmin, !form.scoped else { return nil }
                return Self.clientSecurity
            case .combined:
                return endpoint.access == .adminOnly || form.scoped ? Self.adminSecurity : Self.clientSecurity + Self.adminSecurity
            }
        }

        mutating func addRPC(_ name: String, _ endpoint: RPCEndpoint) {
            let fallback = OpenAPIOperation(summary: name, request: JSONSchema.anyObject, response: JSONSchema.anyObject)
            var operations = OpenAPISchemas.rpcs[name] ?? [fallback]
            if !endpoint.anyMethod {
                // A route of one method: the route table says which.
                var operation = operations.first ?? fallback
                operation.method = endpoint.method
                operation.target = .collection
                operations = [operation]
            }
            let tag = UnsupportedRPC.methods[name] != nil ? "Not supported" : endpoint.access == .adminOnly ? "Admin" : "Accounts"
            let base = Self.identifier(name)
            for form in OpenAPIDocument.forms(of: name) {
                guard let security = callers(endpoint, form) else { continue }
                for operation in operations where (operation.target == .resource) == form.resource {
                    let method = operation.method ?? endpoint.method
                    let id = base + form.suffix + (endpoint.anyMethod ? "_" + method.rawValue.lowercased() : "")
                    add(operation, method: method, path: form.path, id: id, tag: tag, security: security)
                }
            }
        }

        mutating func addToken(_ endpoint: RPCEndpoint) {
            var operation = OpenAPISchemas.token
            operation.method = endpoint.method
            add(
                operation, method: endpoint.method, path: OpenAPISchemas.tokenPath, id: "token", tag: "Secure Token",
                security: Self.clientSecurity)
        }

        mutating func addFixed(_ path: String, _ route: FixedRoute) {
            let catalogue = OpenAPISchemas.fixedKey(for: path).flatMap { OpenAPISchemas.fixed[$0] } ?? []
            var operation =
                catalogue.first(where: { $0.method == route.method }) ?? catalogue.first
                ?? OpenAPIOperation(summary: path, response: JSONSchema.anything)
            operation.method = route.method
            let id = Self.identifier(String(path.drop(while: { $0 == "/" })))
            add(operation, method: route.method, path: path, id: id, tag: "Server", security: [])
            if route.method == .get {
                // A fixed GET route answers HEAD too.
                var head = operation
                head.summary = "The headers of GET \(path)."
                head.response = nil
                add(head, method: .head, path: path, id: id + "_head", tag: "Server", security: [], headOnly: true)
            }
        }

        /// `name` as an operation id: ASCII letters and digits, anything else `_`.
        static func identifier(_ name: String) -> String {
            String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
        }

        mutating func add(
            _ operation: OpenAPIOperation, method: HTTPRequest.Method, path: String, id: String, tag: String, security: [JSONValue],
            headOnly: Bool = false
        ) {
            var unique = id
            var counter = 2
            while operationIDs.contains(unique) {
                unique = "\(id)_\(counter)"
                counter += 1
            }
            operationIDs.insert(unique)
            tags.insert(tag)
            var members: [String: JSONValue] = [
                "operationId": .string(unique), "summary": .string(operation.summary), "tags": .array([.string(tag)]),
                "security": .array(security),
            ]
            var parameters: [JSONValue] = []
            if path.contains("{project}") { parameters.append(.object(["$ref": .string("#/components/parameters/project")])) }
            if path.contains("{id}") { parameters.append(.object(["$ref": .string("#/components/parameters/id")])) }
            var query = operation.query
            var requiredQuery: Set<String> = []
            if let request = operation.request {
                if method == .get || method == .head {
                    // A GET's fields are its query parameters.
                    let (properties, required) = Self.properties(of: request)
                    query.merge(properties) { own, _ in own }
                    requiredQuery = required
                } else {
                    var content: [String: JSONValue] = [:]
                    for type in operation.bodyTypes { content[type] = .object(["schema": request]) }
                    members["requestBody"] = .object(["content": .object(content)])
                }
            }
            for (name, schema) in query.sorted(by: { $0.key < $1.key }) {
                var parameter: [String: JSONValue] = ["name": .string(name), "in": .string("query"), "schema": schema]
                if requiredQuery.contains(name) { parameter["required"] = .bool(true) }
                parameters.append(.object(parameter))
            }
            if !parameters.isEmpty { members["parameters"] = .array(parameters) }
            members["responses"] = .object(Self.responses(operation, headOnly: headOnly))
            paths[path, default: [:]][method.rawValue.lowercased()] = .object(members)
        }

        /// The `properties` and `required` of an object schema.
        static func properties(of schema: JSONValue) -> (properties: [String: JSONValue], required: Set<String>) {
            guard case .object(let members) = schema, case .object(let properties)? = members["properties"] else { return ([:], []) }
            var required: Set<String> = []
            if case .array(let names)? = members["required"] {
                required = Set(names.compactMap(\.stringValue))
            }
            return (properties, required)
        }

        static func responses(_ operation: OpenAPIOperation, headOnly: Bool) -> [String: JSONValue] {
            let errorSchema = operation.errorType == OpenAPISchemas.json ? JSONSchema.ref("Error") : JSONSchema.string
            var responses: [String: JSONValue] = [
                "default": .object([
                    "description": .string(
                        operation.errorType == OpenAPISchemas.json ? "An error, in Firebase's shape." : "An error page."),
                    "content": .object([operation.errorType: .object(["schema": errorSchema])]),
                ])
            ]
            if headOnly {
                responses["200"] = .object(["description": .string("The GET's headers, no body.")])
            } else if let response = operation.response {
                responses["200"] = .object([
                    "description": .string("OK."), "content": .object([operation.responseType: .object(["schema": response])]),
                ])
            } else {
                responses["400"] = .object([
                    "description": .string("OPERATION_NOT_ALLOWED: the server does not serve this method."),
                    "content": .object([OpenAPISchemas.json: .object(["schema": JSONSchema.ref("Error")])]),
                ])
            }
            for (status, description) in operation.otherResponses {
                responses[status] = .object(["description": .string(description)])
            }
            return responses
        }

        func document(version: String, projectID: String?) -> JSONValue {
            var project: [String: JSONValue] = ["type": .string("string"), "minLength": .int(1)]
            if let projectID { project["enum"] = .array([.string(projectID)]) }
            let description: String =
                switch listener {
                case .admin: "The admin listener: every RPC, for an admin bearer token (Authorization: Bearer)."
                case .publicOnly: "The public listener: the RPCs apps call with an API key, the token route and the fixed routes."
                case .combined: "A demo project's listener: apps (API key) and admins (bearer token) alike."
                }
            let securitySchemes: [String: JSONValue] = [
                "apiKey": .object(["type": .string("apiKey"), "in": .string("query"), "name": .string("key")]),
                "apiKeyHeader": .object(["type": .string("apiKey"), "in": .string("header"), "name": .string("x-goog-api-key")]),
                "adminBearer": .object([
                    "type": .string("http"), "scheme": .string("bearer"),
                    "description": .string("An admin token of the server's configuration."),
                ]),
            ]
            let parameters: [String: JSONValue] = [
                "project": .object([
                    "name": .string("project"), "in": .string("path"), "required": .bool(true), "schema": .object(project),
                    "description": .string("The project id; another project's is refused."),
                ]),
                "id": .object([
                    "name": .string("id"), "in": .string("path"), "required": .bool(true),
                    "schema": .object(["type": .string("string"), "minLength": .int(1), "pattern": .string("^[^/]+$")]),
                    "description": .string("The resource's id."),
                ]),
            ]
            return .object([
                "openapi": .string("3.1.0"),
                "info": .object([
                    "title": .string("accountd"), "version": .string(version),
                    "description": .string(
                        "Firebase Auth's Identity Toolkit and Secure Token REST APIs, as accountd serves them. \(description)"),
                ]),
                "tags": .array(tags.sorted().map { .object(["name": .string($0)]) }),
                "paths": .object(paths.mapValues { .object($0) }),
                "components": .object([
                    "schemas": .object(OpenAPISchemas.components), "securitySchemes": .object(securitySchemes),
                    "parameters": .object(parameters),
                ]),
            ])
        }
    }
}

extension APIRoutes {
    /// Adds `GET /openapi.json`: the OpenAPI document (``OpenAPIDocument``) of these routes as
    /// `listener` serves them, itself included. Call it last, once every other route is in: the
    /// document is made now, from the table as it is. Like every fixed route, it needs no credentials.
    package mutating func addOpenAPI(listener: Listener, version: String, projectID: String? = nil) {
        // In the table before the document is made, so that the document lists it.
        fixed[OpenAPISchemas.documentPath] = FixedRoute(method: .get) { _, _ in WireEncoding.response(json: .object([:])) }
        let document = OpenAPIDocument.document(routes: self, listener: listener, version: version, projectID: projectID)
        fixed[OpenAPISchemas.documentPath] = FixedRoute(method: .get) { _, _ in WireEncoding.response(json: document) }
    }
}
