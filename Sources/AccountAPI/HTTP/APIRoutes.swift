package import HTTPTypes
package import Hummingbird
package import Logging

/// One call of an Identity Toolkit RPC, after transport checks: who calls, for which project,
/// with which body.
package struct RPCCall: Sendable {
    /// The caller per identity-toolkit.md §1.3.
    package var caller: Caller
    /// The project the request acts on.
    package var projectID: String
    /// Whether the path was project-scoped (`/v1/projects/{p}/…`).
    package var projectScoped: Bool
    /// The HTTP method (a resource collection's handler dispatches on it).
    package var method: HTTPRequest.Method = .post
    /// The resource id of a path like `…/customTokenSigners/{id}`.
    package var resource: String?
    /// The query's parameters but the API key (`updateMask`, `oauthIdpConfigId`, `pageSize`…).
    package var query: [String: String] = [:]
    /// The parsed body.
    package var body: RPCBody
    /// `User-Agent`, recorded on sessions.
    package var userAgent: String?
    /// The peer's address, recorded on sessions.
    package var ipAddress: String?
    /// `X-Firebase-Locale`, the `lang` of email actions.
    package var locale: String?
    /// The request's logger (carries the request id).
    package var logger: Logger

    /// The address the abuse limits count a client's request under; nil for an admin, whose calls
    /// are never limited (federation-and-limits.md §E.6).
    package var limitedAddress: String? {
        caller.isAdmin ? nil : ipAddress
    }

    /// The admin's name, when the caller is one.
    package var adminName: String? {
        if case .admin(let name) = caller { return name }
        return nil
    }
}

/// A registered RPC: its method, who may call it, its body limit and its handler.
package struct RPCEndpoint: Sendable {
    /// Who may call.
    package enum Access: Sendable {
        /// Clients (with an API key) and admins.
        case clientOrAdmin
        /// Admins only; a client gets `INSUFFICIENT_PERMISSION`.
        case adminOnly
    }

    /// The one HTTP method the RPC answers.
    package var method: HTTPRequest.Method
    /// Whether every method is answered alike (the refusals of methods not served here).
    package var anyMethod: Bool
    /// Who may call.
    package var access: Access
    /// The largest body accepted (identity-toolkit.md §1.2: 1 MiB, 16 MiB for `batchCreate`).
    package var maxBodyBytes: Int
    /// Produces the response.
    package var handler: @Sendable (RPCCall) async throws -> Response

    /// Creates an endpoint.
    package init(
        method: HTTPRequest.Method = .post,
        anyMethod: Bool = false,
        access: Access = .clientOrAdmin,
        maxBodyBytes: Int = 1 << 20,
        handler: @escaping @Sendable (RPCCall) async throws -> Response
    ) {
        self.method = method
        self.anyMethod = anyMethod
        self.access = access
        self.maxBodyBytes = maxBodyBytes
        self.handler = handler
    }
}

/// A fixed route outside the RPC scheme (`/healthz`, key routes).
package struct FixedRoute: Sendable {
    /// The HTTP method.
    package var method: HTTPRequest.Method
    /// Produces the response.
    package var handler: @Sendable (Request, AccountRequestContext) async throws -> Response

    /// Creates a route.
    package init(
        method: HTTPRequest.Method = .get,
        handler: @escaping @Sendable (Request, AccountRequestContext) async throws -> Response
    ) {
        self.method = method
        self.handler = handler
    }
}

/// Everything the server answers; features add themselves to it at composition.
package struct APIRoutes: Sendable {
    /// Fixed routes by path (host prefix removed).
    package var fixed: [String: FixedRoute] = [:]
    /// RPCs by name (`signUp`, `lookup`, `v2/passwordPolicy`, …; ``APIPath``), added with ``register(_:_:)``.
    package private(set) var rpcs: [String: RPCEndpoint] = [:]
    /// The Secure Token route.
    package var token: RPCEndpoint?

    /// No routes.
    package init() {}

    /// Adds the RPC `name`. Each name is registered once: a second registration is a composition
    /// error (it silently replaced the first before), and stops the server at start.
    package mutating func register(_ name: String, _ endpoint: RPCEndpoint) {
        precondition(rpcs[name] == nil, "the RPC \(name) is registered twice")
        rpcs[name] = endpoint
    }
}
