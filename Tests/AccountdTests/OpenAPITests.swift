import AccountAPI
import AccountCore
import AccountTesting
import Foundation
import NIOHTTP1
import Synchronization
import Testing

@testable import accountd

/// `GET /openapi.json` on each listener, fetched over real HTTP: the document is made from the
/// route table, so every route it lists resolves (``APIPath``) to a registered route the listener
/// serves, every RPC the listener serves is listed at each of its URL paths with a schema, and the
/// schema catalogue (``OpenAPISchemas``) documents exactly the route table.
@Suite("The OpenAPI document of each listener")
struct OpenAPITests {
    /// The project of ``productionConfiguration()``.
    static let production = "acme-prod"
    /// The project of ``testConfiguration(port:)``.
    static let demo = "demo-test"

    /// Fetches the document without credentials and parses it.
    static func fetch(_ http: TestHTTPClient) async throws -> [String: JSONValue] {
        let reply = try await http.get("/openapi.json")
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self).prefix(300))")
        #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true)
        return try #require(try JSONValue.parse(reply.body).objectValue)
    }

    /// The names of the security schemes an operation accepts (alternatives flattened).
    static func schemes(_ operation: [String: JSONValue]) -> Set<String> {
        guard case .array(let alternatives)? = operation["security"] else { return [] }
        return Set(alternatives.flatMap { $0.objectValue.map { Array($0.keys) } ?? [] })
    }

    /// Every `$ref` in `value`.
    static func references(in value: JSONValue) -> [String] {
        switch value {
        case .object(let members):
            var found = members["$ref"]?.stringValue.map { [$0] } ?? []
            for (key, member) in members where key != "$ref" { found += references(in: member) }
            return found
        case .array(let items):
            return items.flatMap(references)
        default:
            return []
        }
    }

    /// Checks `document` as `listener` must serve it, against the public listener's route table
    /// `table` (the admin listener's is the same RPCs and token route, less the action page, plus
    /// `/metrics`).
    static func check(_ document: [String: JSONValue], table: APIRoutes, listener: Listener, project: String) throws {
        let version = try #require(document["openapi"]?.stringValue)
        #expect(version.hasPrefix("3.1."), "openapi \(version)")
        #expect(document["info"]?.value(at: "version")?.stringValue?.isEmpty == false)
        let paths = try #require(document["paths"]?.objectValue)
        let components = try #require(document["components"]?.objectValue)
        let schemas = components["schemas"]?.objectValue ?? [:]
        let parameters = components["parameters"]?.objectValue ?? [:]
        #expect(schemas["Error"] != nil)
        #expect(Set(components["securitySchemes"]?.objectValue?.keys.map { $0 } ?? []) == ["apiKey", "apiKeyHeader", "adminBearer"])

        var served: [String: Set<String>] = [:]
        var operationIDs: [String] = []
        for (path, item) in paths.sorted(by: { $0.key < $1.key }) {
            let operations = try #require(item.objectValue, "\(path)")
            let concrete = path.replacingOccurrences(of: "{project}", with: project).replacingOccurrences(of: "{id}", with: "some-id")
            let resolved = APIPath(concrete)
            for (method, value) in operations {
                let operation = try #require(value.objectValue, "\(method) \(path)")
                let label = "\(method.uppercased()) \(path)"
                operationIDs.append(operation["operationId"]?.stringValue ?? "")
                let responses = operation["responses"]?.objectValue ?? [:]
                #expect(responses["default"] != nil, "\(label): no error answer")
                #expect(responses["200"] != nil || responses["400"] != nil, "\(label): no answer documented")
                if case .object(let body)? = operation["requestBody"] {
                    let content = body["content"]?.objectValue ?? [:]
                    let described = !content.isEmpty && content.values.allSatisfy { $0.value(at: "schema") != nil }
                    #expect(described, "\(label): a body without schema")
                }
                switch resolved {
                case .rpc(let name, let scope, _):
                    let endpoint = try #require(table.rpcs[name], "\(label) resolves to \(name), which is not registered")
                    if !endpoint.anyMethod {
                        #expect(method == "\(endpoint.method)".lowercased(), "\(label): the route answers \(endpoint.method)")
                    }
                    // Only the refusals of methods this server does not have (every method alike) never succeed.
                    #expect(
                        responses["200"]?.value(at: "content") != nil || (endpoint.anyMethod && responses["400"] != nil),
                        "\(label): no schema for the answer")
                    let accepted = schemes(operation)
                    switch listener {
                    case .admin:
                        #expect(accepted == ["adminBearer"], "\(label): \(accepted)")
                    case .publicOnly:
                        #expect(endpoint.access == .clientOrAdmin, "\(label): an admin's RPC on the public listener")
                        #expect(scope == nil, "\(label): a project-scoped path on the public listener")
                        #expect(accepted == ["apiKey", "apiKeyHeader"], "\(label): \(accepted)")
                    case .combined:
                        let admins = endpoint.access == .adminOnly || scope != nil
                        let wanted: Set<String> = admins ? ["adminBearer"] : ["apiKey", "apiKeyHeader", "adminBearer"]
                        #expect(accepted == wanted, "\(label): \(accepted)")
                    }
                    served[name, default: []].insert(path)
                case .token:
                    #expect(listener != .admin, "\(label): the admin listener has no token route")
                    #expect(table.token != nil && method == "post", "\(label)")
                    #expect(schemes(operation) == ["apiKey", "apiKeyHeader"], "\(label)")
                case .fixed(let fixed):
                    let known =
                        table.fixed[fixed] != nil || fixed == OpenAPISchemas.documentPath
                        || (listener == .admin && fixed == OpenAPISchemas.metricsPath)
                    #expect(known, "\(label): no such fixed route")
                    #expect(OpenAPISchemas.fixedKey(for: fixed) != nil, "\(label): no schema")
                    if listener == .admin {
                        #expect(!fixed.hasPrefix("/__/auth/action"), "\(label): the admin listener has no action page")
                    }
                    #expect(operation["security"] == .array([]), "\(label): fixed routes need no credentials")
                case .tenant, .unknown:
                    Issue.record("\(label) resolves to no route")
                }
            }
        }
        #expect(Set(operationIDs).count == operationIDs.count, "operation ids repeat")
        #expect(!operationIDs.contains(""), "an operation without id")

        // Every RPC the listener serves is there, at each of its URL paths.
        let expected = table.rpcs.filter { listener != .publicOnly || $0.value.access == .clientOrAdmin }
        for name in expected.keys.sorted() {
            let documented = served[name] ?? []
            #expect(!documented.isEmpty, "\(name) is not documented on the \(listener) listener")
            guard !name.contains("/") else { continue }
            #expect(documented.contains("/v1/accounts:\(name)"), "\(name): \(documented)")
            if listener.servesAdmins { #expect(documented.contains("/v1/projects/{project}/accounts:\(name)"), "\(name): \(documented)") }
        }
        #expect(Set(served.keys) == Set(expected.keys), "served but not registered: \(Set(served.keys).subtracting(expected.keys))")
        if listener.servesAdmins {
            #expect(served["signUp"]?.contains("/v1/projects/{project}/accounts") == true)
            #expect(served["createSessionCookie"]?.contains("/v1/projects/{project}:createSessionCookie") == true)
            #expect(served["v1/customTokenSigners"]?.contains("/v1/projects/{project}/customTokenSigners/{id}") == true)
            #expect(served["v2/config"]?.contains("/v2/projects/{project}/config") == true)
        } else {
            #expect(!paths.keys.contains { $0.contains("{project}") }, "project-scoped paths on the public listener")
        }

        // The token route on listeners that serve apps only; every fixed route (the admin listener: but the action page).
        #expect((paths[OpenAPISchemas.tokenPath] != nil) == listener.servesClients)
        for path in table.fixed.keys.sorted() where !(listener == .admin && path.hasPrefix("/__/auth/action")) {
            #expect(paths[path] != nil, "the fixed route \(path) is not documented")
        }
        #expect(paths[OpenAPISchemas.documentPath]?.value(at: "get") != nil, "the document lists itself")

        // Every reference resolves.
        let schemaPrefix = "#/components/schemas/"
        let parameterPrefix = "#/components/parameters/"
        for reference in Set(references(in: .object(document))).sorted() {
            if reference.hasPrefix(schemaPrefix) {
                #expect(schemas[String(reference.dropFirst(schemaPrefix.count))] != nil, "\(reference)")
            } else if reference.hasPrefix(parameterPrefix) {
                #expect(parameters[String(reference.dropFirst(parameterPrefix.count))] != nil, "\(reference)")
            } else {
                Issue.record("an unexpected reference \(reference)")
            }
        }
    }

    @Test("a real project: the public listener documents the client RPCs, the token route and the fixed routes; the admin one every RPC")
    func productionListeners() async throws {
        let routes = Mutex<APIRoutes?>(nil)
        try await withServer(
            productionConfiguration(), database: try await TestDatabase.createMigrated(), onRoutes: { r in routes.withLock { $0 = r } }
        ) { http in
            let table = try #require(routes.withLock { $0 })
            let publicDocument = try await Self.fetch(http)
            try Self.check(publicDocument, table: table, listener: .publicOnly, project: Self.production)
            let paths = publicDocument["paths"]?.objectValue ?? [:]
            #expect(paths["/v1/accounts:signUp"] != nil && paths["/v1/accounts:lookup"] != nil)
            #expect(paths["/v1/accounts:batchDelete"] == nil && paths["/v1/accounts:verifyIdToken"] == nil, "admin RPCs are not public")
            #expect(paths["/__/auth/action"] != nil)

            let adminDocument = try await Self.fetch(http.admin)
            try Self.check(adminDocument, table: table, listener: .admin, project: Self.production)
            let adminPaths = adminDocument["paths"]?.objectValue ?? [:]
            #expect(adminPaths[OpenAPISchemas.tokenPath] == nil && adminPaths["/__/auth/action"] == nil)
            #expect(adminPaths["/v1/projects/{project}/accounts:batchDelete"] != nil)
            #expect(adminDocument != publicDocument)
        }
    }

    @Test("a demo project: the combined listener documents everything for apps and admins alike; its admin listener too")
    func demoListeners() async throws {
        let routes = Mutex<APIRoutes?>(nil)
        try await withServer(
            PhoneSignInTests.demoConfiguration(), database: try await TestDatabase.createMigrated(),
            onRoutes: { r in routes.withLock { $0 = r } }
        ) { http in
            let table = try #require(routes.withLock { $0 })
            let combined = try await Self.fetch(http)
            try Self.check(combined, table: table, listener: .combined, project: Self.demo)
            let paths = combined["paths"]?.objectValue ?? [:]
            #expect(paths["/v1/projects/{project}/accounts:batchDelete"] != nil && paths[OpenAPISchemas.tokenPath] != nil)
            #expect(paths["/emulator/v1/projects/\(Self.demo)/verificationCodes"] != nil, "the test inbox, a fixed path with the project")
            try Self.check(try await Self.fetch(http.admin), table: table, listener: .admin, project: Self.demo)

            // A real answer's members are all documented: the signUp schema says what signUp writes.
            let reply = try await API(http: http).client("signUp", ["email": "schema@example.com", "password": "secret-pass"])
            #expect(reply.status == 200)
            let schema =
                paths["/v1/accounts:signUp"]?.value(at: "post")?.objectValue?["responses"]?.objectValue?["200"]?
                .objectValue?["content"]?.objectValue?[OpenAPISchemas.json]?.value(at: "schema.properties")?.objectValue ?? [:]
            #expect(Set(reply.json.keys).subtracting(schema.keys).isEmpty, "undocumented: \(Set(reply.json.keys).subtracting(schema.keys))")
        }
    }

    @Test("a method a path does not answer is 404 NOT_FOUND, as an unknown path (identity-toolkit.md §1.1, Google's answer)")
    func wrongMethodIsNotFound() async throws {
        try await withServer(productionConfiguration(), database: try await TestDatabase.createMigrated()) { http in
            func expect404(_ reply: TestHTTPClient.Reply, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(reply.status == 404, sourceLocation: sourceLocation)
                let error = reply.json["error"] as? [String: Any]
                #expect(error?["status"] as? String == "NOT_FOUND", sourceLocation: sourceLocation)
            }
            expect404(try await http.get("/v1/accounts:signUp?key=\(API.key)"))
            expect404(try await http.send(.TRACE, "/healthz"))
            expect404(try await http.get("/v1/token?key=\(API.key)"))
            expect404(try await http.admin.send(.PUT, "/v1/projects/acme-prod/customTokenSigners", headers: [API.admin]))
            expect404(try await http.get("/v1/accounts:noSuchMethod?key=\(API.key)"))
        }
    }

    @Test("the schema catalogue documents exactly the route table: every RPC, fixed route and the token route, nothing else")
    func catalogueMatchesRouteTable() async throws {
        let routes = Mutex<APIRoutes?>(nil)
        // The demo configuration with the test inbox, so that every fixed route is in the table.
        try await withServer(
            PhoneSignInTests.demoConfiguration(), database: try await TestDatabase.createMigrated(),
            onRoutes: { r in routes.withLock { $0 = r } }
        ) { _ in
            let table = try #require(routes.withLock { $0 })
            var registered = Set(table.rpcs.keys)
            if table.token != nil { registered.insert(OpenAPISchemas.tokenPath) }
            for path in table.fixed.keys {
                let key = OpenAPISchemas.fixedKey(for: path)
                #expect(key != nil, "the fixed route \(path) has no schema")
                registered.insert(key ?? path)
            }
            // The composition root adds these two (`/metrics` to the admin listener's table only).
            registered.formUnion([OpenAPISchemas.documentPath, OpenAPISchemas.metricsPath])
            let documented = OpenAPISchemas.documentedNames
            #expect(registered.subtracting(documented).isEmpty, "routes without schema: \(registered.subtracting(documented).sorted())")
            #expect(documented.subtracting(registered).isEmpty, "schemas without route: \(documented.subtracting(registered).sorted())")
        }
    }
}
