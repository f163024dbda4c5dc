package import AccountCore
import CoreMetrics
import Foundation
import HTTPTypes
package import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Tracing

/// The server's one responder: resolves the path (identity-toolkit.md §1.1), applies the caller checks
/// (§1.3), runs the handler, and turns every failure into Firebase's error shape. Nothing thrown
/// below reaches the client unmapped: unexpected errors become a 500 that names only the request id.
package struct APIResponder: HTTPResponder {
    package typealias Context = AccountRequestContext

    private let routes: APIRoutes
    private let access: AccessPolicy
    private let deadline: Duration
    private let listener: Listener
    /// Counts refused admin tokens per address (nil: nothing counted).
    private let tokenGuard: AdminTokenGuard?
    /// Where requests are counted and timed (``MetricFamily/httpRequests``, ``MetricFamily/signIns``).
    private let telemetry: Telemetry
    /// Requests being answered on this listener.
    private let inFlight: Meter

    /// Creates the responder for one listener; each request's database work must start within
    /// `deadline` of its arrival (``RequestScope``); `tokenGuard` counts refused admin tokens.
    package init(
        routes: APIRoutes, access: AccessPolicy, listener: Listener = .combined, deadline: Duration = .seconds(5),
        tokenGuard: AdminTokenGuard? = nil, telemetry: Telemetry = .off
    ) {
        self.telemetry = telemetry
        self.inFlight = telemetry.meter(.httpInFlight, [listener.metricLabel])
        self.routes = routes
        self.access = access
        self.listener = listener
        self.deadline = deadline
        self.tokenGuard = tokenGuard
    }

    package func respond(to request: Request, context: AccountRequestContext) async throws -> Response {
        let started = ContinuousClock.now
        let requestID = Self.requestID(from: request)
        var logger = context.logger
        logger[metadataKey: "request_id"] = .string(requestID)
        // Parsed once: the route's name labels the metrics and the log, and dispatch serves it.
        let path = APIPath(request.uri.path)
        let rpc = routeName(path, method: request.method)
        logger[metadataKey: "rpc"] = .string(rpc)
        inFlight.increment()
        defer { inFlight.decrement() }

        var response: Response
        var code = ""
        var secondFactorRequired = false
        // W3C trace context: the caller's trace in every line of this request, and passed on to
        // the calls it makes; a bootstrapped tracer gets its span (swift-distributed-tracing).
        let trace = TraceContext(traceparent: request.headers[Self.traceparent], tracestate: request.headers[Self.tracestate])
        if let trace {
            logger[metadataKey: "trace_id"] = .string(trace.traceID)
            logger[metadataKey: "span_id"] = .string(trace.spanID)
        }
        var instrumentation = InstrumentationContext.topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &instrumentation, using: HeaderExtractor())
        do {
            let channel = context.channel
            let scope = RequestScope(budget: deadline, clientGone: { !channel.isActive })
            response = try await TraceContext.$current.withValue(trace) {
                try await withSpan(rpc, context: instrumentation, ofKind: .server) { [logger] _ in
                    try await RequestScope.$current.withValue(scope) {
                        try await dispatch(request, path: path, context: context, logger: logger)
                    }
                }
            }
        } catch let error as APIError {
            code = Self.metricCode(error)
            response = WireEncoding.response(for: error)
        } catch let error as AccountError {
            let wire = APIError(error)
            code = Self.metricCode(wire)
            response = WireEncoding.response(for: wire)
        } catch let required as SecondFactorRequired {
            // A challenged first factor (mfa-phone-tenants.md §B.3): 200, no tokens.
            secondFactorRequired = true
            response = WireEncoding.response(json: .object(MFAWire.pendingFields(required)))
        } catch let error as HTTPError where error.status == .contentTooLarge {
            let wire = APIError.payloadTooLarge(limit: 1 << 20)
            code = Self.metricCode(wire)
            response = WireEncoding.response(for: wire)
        } catch {
            logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            let wire = APIError.internalError(requestID: requestID)
            code = Self.metricCode(wire)
            response = WireEncoding.response(for: wire)
        }
        response.headers[.init("X-Request-Id")!] = requestID
        if let origin = request.headers[.origin] {
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.vary] = "Origin"
        }
        let elapsed = ContinuousClock.now - started
        if !telemetry.isOff {
            let status = response.status.code
            telemetry.count(.httpRequests, [listener.metricLabel, rpc, String(status), code])
            telemetry.record(.httpRequestDuration, [listener.metricLabel, rpc], elapsed)
            if let provider = Self.signInProviders[rpc], request.method != .options {
                let outcome = secondFactorRequired ? "second_factor_required" : code.isEmpty ? "success" : code
                telemetry.count(.signIns, [provider, outcome])
            }
        }
        logger.info(
            "request",
            metadata: [
                "method": "\(request.method)",
                "path": "\(request.uri.path)",
                "status": "\(response.status.code)",
                "duration_ms": "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)",
            ]
        )
        return response
    }

    /// An error's code as a metric label: the message's code (`EMAIL_EXISTS`), else the transport
    /// status (`NOT_FOUND` for "Not Found"), else `OTHER`.
    private static func metricCode(_ error: APIError) -> String {
        let code = Telemetry.errorCode(error.message)
        guard code == "OTHER", let status = error.status else { return code }
        return Telemetry.errorCode(status)
    }

    /// The sign-in RPCs and the provider each signs in with (``MetricFamily/signIns``).
    private static let signInProviders: [String: String] = [
        "signInWithPassword": "password", "signInWithEmailLink": "emailLink", "signInWithIdp": "idp",
        "signInWithPhoneNumber": "phone", "signInWithCustomToken": "custom", "v2/accounts/mfaSignIn:finalize": "second_factor",
    ]

    /// The request's route as a metric label and a log field: a registered RPC's name, a fixed
    /// route's path, `token`; `unmatched` for anything else (a label never holds a raw path).
    private func routeName(_ path: APIPath, method: HTTPRequest.Method) -> String {
        if method == .options { return "preflight" }
        switch path {
        case .fixed(let path): return routes.fixed[path] == nil ? "unmatched" : path
        case .rpc(let name, _, _): return routes.rpcs[name] == nil ? "unmatched" : name
        case .token: return "token"
        case .tenant: return "tenant"
        case .unknown: return "unmatched"
        }
    }

    private func dispatch(_ request: Request, path: APIPath, context: AccountRequestContext, logger: Logger) async throws -> Response {
        if request.method == .options {
            return Self.preflight(request)
        }
        switch path {
        case .fixed(let path):
            guard let route = routes.fixed[path], route.method == request.method || (route.method == .get && request.method == .head)
            else { throw APIError.notFound }
            return try await route.handler(request, context)
        case .rpc(let name, let project, let resource):
            guard let endpoint = routes.rpcs[name], endpoint.anyMethod || endpoint.method == request.method else {
                throw APIError.notFound
            }
            return try await runRPC(endpoint, request: request, context: context, project: project, resource: resource, logger: logger)
        case .token:
            guard listener.servesClients, let endpoint = routes.token, endpoint.method == request.method else { throw APIError.notFound }
            return try await runToken(endpoint, request: request, context: context, logger: logger)
        case .tenant:
            throw AccountError(.unsupportedTenantOperation)
        case .unknown:
            throw APIError.notFound
        }
    }

    private func runRPC(
        _ endpoint: RPCEndpoint,
        request: Request,
        context: AccountRequestContext,
        project: String?,
        resource: String?,
        logger: Logger
    ) async throws -> Response {
        let caller = try await resolveCaller(request, context: context, projectScoped: project != nil, pathProject: project)
        // Who may call is decided before a byte of the body is read: a refused caller's body is
        // never buffered nor parsed (Hummingbird discards it as it arrives).
        if case .client = caller, endpoint.access == .adminOnly { throw AccountError(.insufficientPermission) }
        var body = try await Self.readBody(request, limit: Self.bodyLimit(endpoint, caller: caller), form: false)
        if request.method == .get || request.method == .head {
            // GET RPCs (batchGet) carry their fields as query parameters.
            var fields = body.fields
            for (name, value) in request.uri.queryParameters where name != "key" {
                fields[String(name)] = .string(String(value))
            }
            body = RPCBody(fields: fields)
        }
        // Every string a client sends is bounded before any handler sees it (decision 17).
        if case .client = caller { try body.checkClientBounds() }
        if let tenant = try body.nonEmptyString("tenantId") {
            _ = tenant
            throw AccountError(.unsupportedTenantOperation)
        }
        if case .client = caller, let target = try body.nonEmptyString("targetProjectId"), target != access.projectID {
            throw AccountError(.insufficientPermission, "Only authenticated requests can specify target_project_id.")
        }
        let call = RPCCall(
            caller: caller,
            projectID: project ?? access.projectID,
            projectScoped: project != nil,
            method: request.method,
            resource: resource,
            query: Dictionary(
                request.uri.queryParameters.filter { $0.key != "key" }.map { (String($0.key), String($0.value)) }, uniquingKeysWith: { $1 }),
            body: body,
            userAgent: Self.userAgent(request),
            ipAddress: clientAddress(request, context),
            locale: request.headers[.init("X-Firebase-Locale")!],
            logger: logger
        )
        let actor: AuditActor? = call.adminName.map(AuditActor.admin)
        return try await RequestScope.arrived { try await AuditContext.$actor.withValue(actor) { try await endpoint.handler(call) } }
    }

    private func runToken(
        _ endpoint: RPCEndpoint,
        request: Request,
        context: AccountRequestContext,
        logger: Logger
    ) async throws -> Response {
        guard let key = Self.apiKey(request) else { throw APIError.missingAPIKey }
        guard access.accepts(apiKey: key) else { throw APIError.invalidAPIKey }
        let body = try await Self.readBody(request, limit: endpoint.maxBodyBytes, form: true)
        try body.checkClientBounds()
        let call = RPCCall(
            caller: .client(apiKey: key),
            projectID: access.projectID,
            projectScoped: false,
            method: request.method,
            body: body,
            userAgent: Self.userAgent(request),
            ipAddress: clientAddress(request, context),
            locale: nil,
            logger: logger
        )
        return try await RequestScope.arrived { try await endpoint.handler(call) }
    }

    /// The client's address: the peer, or what trusted proxies forwarded (``AccessPolicy/clientAddress(peer:forwardedFor:)``).
    private func clientAddress(_ request: Request, _ context: AccountRequestContext) -> String? {
        access.clientAddress(peer: context.remoteAddress, forwardedFor: request.headers[values: Self.forwardedFor])
    }

    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    private static let traceparent = HTTPField.Name("traceparent")!
    private static let tracestate = HTTPField.Name("tracestate")!

    /// The longest `User-Agent` kept (sessions record it); the rest is cut, at a character boundary.
    static let userAgentLimit = 512

    /// `User-Agent`, cut to ``userAgentLimit`` bytes: a session stores it, so its size is the server's choice.
    static func userAgent(_ request: Request) -> String? {
        guard let value = request.headers[.userAgent] else { return nil }
        guard value.utf8.count > userAgentLimit else { return value }
        var cut = ""
        for character in value {
            guard cut.utf8.count + character.utf8.count <= userAgentLimit else { break }
            cut.append(character)
        }
        return cut
    }

    /// identity-toolkit.md §1.3, checks 1–4, in order, after the listener's own rule: a public
    /// listener that does not serve admins refuses every bearer alike, and the admin listener
    /// refuses every call without one.
    /// A configured bearer is never limited (§E.6); a refused one counts against the client's
    /// address, and an address out of guesses is answered `TOO_MANY_ATTEMPTS_TRY_LATER` with
    /// `Retry-After` instead of 401, writing nothing more (``AdminTokenGuard``).
    private func resolveCaller(_ request: Request, context: AccountRequestContext, projectScoped: Bool, pathProject: String?) async throws
        -> Caller
    {
        if let authorization = request.headers[.authorization], let token = Self.bearerToken(authorization) {
            guard listener.servesAdmins else { throw APIError.adminElsewhere }
            guard let name = access.adminName(forBearer: token) else {
                let address = tokenGuard == nil ? nil : clientAddress(request, context)
                try tokenGuard?.admit(address)
                try await RequestScope.arrived { try await tokenGuard?.failed(address) }
                throw APIError.unauthenticated
            }
            if let pathProject, pathProject != access.projectID { throw APIError.permissionDenied }
            return .admin(name: name)
        }
        guard listener.servesClients else { throw APIError.adminListenerOnly }
        if projectScoped { throw APIError.permissionDenied }
        guard let key = Self.apiKey(request) else { throw APIError.missingAPIKey }
        guard access.accepts(apiKey: key) else { throw APIError.invalidAPIKey }
        return .client(apiKey: key)
    }

    /// The token of an `Authorization: Bearer …` value (scheme case-insensitive, blanks trimmed).
    package static func bearerToken(_ authorization: String) -> String? {
        let bytes = Array(authorization.utf8)
        guard bytes.count >= 7, bytes[6] == UInt8(ascii: " "),
            zip(bytes[..<6], "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 })
        else { return nil }
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var token = bytes[7...]
        while let first = token.first, isBlank(first) { token = token.dropFirst() }
        while let last = token.last, isBlank(last) { token = token.dropLast() }
        return String(decoding: token, as: UTF8.self)
    }

    private static func apiKey(_ request: Request) -> String? {
        if let key = request.uri.queryParameters.get("key"), !key.isEmpty { return key }
        if let key = request.headers[.init("x-goog-api-key")!], !key.isEmpty { return key }
        return nil
    }

    /// The most a client (API key) may send to any RPC; admins get the route's own limit (16 MiB
    /// for `batchCreate`).
    static let clientBodyLimit = 1 << 20

    /// The body limit of `endpoint` for `caller`.
    static func bodyLimit(_ endpoint: RPCEndpoint, caller: Caller) -> Int {
        caller.isAdmin ? endpoint.maxBodyBytes : min(endpoint.maxBodyBytes, clientBodyLimit)
    }

    /// Reads the body up to `limit` bytes: JSON, or with `form` (the token route only, reference
    /// §1.2) a form for `application/x-www-form-urlencoded`. Everywhere else a form body, which any
    /// web page can make a visitor's browser send without a CORS preflight, is refused.
    private static func readBody(_ request: Request, limit: Int, form: Bool) async throws -> RPCBody {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        let isForm = contentType.hasPrefix("application/x-www-form-urlencoded")
        if !contentType.isEmpty, !contentType.hasPrefix("application/json"), !contentType.hasPrefix("text/plain"), !(form && isForm) {
            throw APIError.invalidJSON("Content-Type \(contentType.prefix(60)) is not supported; send application/json.")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError.payloadTooLarge(limit: limit)
        } catch is NIOTooManyBytesError {
            throw APIError.payloadTooLarge(limit: limit)
        } catch is HTTPParserError {
            // A malformed body (a bad chunk size, say): the request's fault, and the end of the
            // connection, whose bytes can no longer be framed.
            throw APIError.malformedHTTP
        }
        let data = Data(buffer.readableBytesView)
        return isForm ? RPCBody(form: data) : try RPCBody(json: data)
    }

    private static func preflight(_ request: Request) -> Response {
        var headers = HTTPFields()
        if let origin = request.headers[.origin] {
            headers[.accessControlAllowOrigin] = origin
            headers[.vary] = "Origin"
        }
        headers[.accessControlAllowMethods] = "GET, POST, OPTIONS"
        headers[.accessControlAllowHeaders] =
            request.headers[.accessControlRequestHeaders]
            ?? "Content-Type, Authorization, X-Client-Version, X-Firebase-Locale, X-Goog-Api-Key"
        headers[.accessControlMaxAge] = "3600"
        return Response(status: .noContent, headers: headers)
    }

    private static func requestID(from request: Request) -> String {
        if let given = request.headers[.init("X-Request-Id")!], given.count <= 64, !given.isEmpty,
            given.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        {
            return given
        }
        return RequestIDs.next()
    }
}

/// Reads a tracer's propagation headers from a request.
struct HeaderExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}

/// Request ids for the log and `X-Request-Id`: this process's random prefix and a counter, 16 hex
/// digits as before, unique per process and, by the prefix, across replicas for log searches.
/// Not a secret (it is sent back to the caller): drawing 8 random bytes per request cost a
/// `getrandom` call each.
enum RequestIDs {
    private static let prefix = Hex.encode(SystemRandom().bytes(4))
    private static let counter = Atomic<UInt32>(0)

    static func next() -> String {
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        let hex = String(n, radix: 16)
        return prefix + String(repeating: "0", count: 8 - hex.count) + hex
    }
}
