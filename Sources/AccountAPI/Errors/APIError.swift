package import AccountCore
package import HTTPTypes

/// A failure as the wire shows it: Firebase's `{"error":{"code","message","errors","status"?}}`.
/// Transport errors carry a `status`; business errors (every ``AccountError``) are 400 without one,
/// as Firebase sends them.
package struct APIError: Error, Sendable, Equatable {
    /// HTTP status, repeated as `error.code`.
    package var httpStatus: HTTPResponse.Status
    /// `error.message`: `CODE` or `CODE : detail`.
    package var message: String
    /// `error.status` for transport errors (`INVALID_ARGUMENT`, `PERMISSION_DENIED`, …).
    package var status: String?
    /// `errors[0].reason`.
    package var reason: String
    /// Extra response headers (`Retry-After` on 503).
    package var headers: HTTPFields = [:]
    /// The v2 shape (mfa-phone-tenants.md §0.1): a `status`, no `errors` array.
    package var v2 = false

    /// Creates a wire error.
    package init(
        _ httpStatus: HTTPResponse.Status,
        message: String,
        status: String? = nil,
        reason: String = "invalid"
    ) {
        self.httpStatus = httpStatus
        self.message = message
        self.status = status
        self.reason = reason
    }

    /// 404 for a path or method that names no route.
    package static let notFound = APIError(.notFound, message: "Not Found", status: "NOT_FOUND", reason: "notFound")

    /// 400 for a body that does not parse or has a field of the wrong type.
    package static func invalidJSON(_ detail: String) -> APIError {
        APIError(.badRequest, message: "Invalid JSON payload received. \(detail)", status: "INVALID_ARGUMENT")
    }

    /// 400 for bytes the HTTP parser refused (a malformed request line, header or chunked body).
    /// The connection cannot carry another request after it, so the answer closes it.
    package static var malformedHTTP: APIError {
        var error = APIError(
            .badRequest, message: "Invalid HTTP request: it could not be parsed.", status: "INVALID_ARGUMENT", reason: "badRequest")
        error.headers[.connection] = "close"
        return error
    }

    /// 413 for a body over the route's limit. The rest of the body is not read, so the answer
    /// closes the connection.
    package static func payloadTooLarge(limit: Int) -> APIError {
        var error = APIError(
            .contentTooLarge,
            message: "Request payload size exceeds the limit: \(limit) bytes.",
            status: "INVALID_ARGUMENT"
        )
        error.headers[.connection] = "close"
        return error
    }

    /// 401 for a bearer token that is not configured.
    package static let unauthenticated = APIError(
        .unauthorized,
        message: "Request had invalid authentication credentials.",
        status: "UNAUTHENTICATED",
        reason: "unauthorized"
    )

    /// 401 for any bearer on a public listener that does not serve admins (a non-demo project's):
    /// the same answer whether the token is configured or not, so the public port tells an
    /// attacker nothing about a guessed token.
    package static let adminElsewhere = APIError(
        .unauthorized,
        message: "Request had invalid authentication credentials. Admin calls are served on the admin listener only.",
        status: "UNAUTHENTICATED",
        reason: "unauthorized"
    )

    /// 401 on the admin listener for a call without an admin bearer token.
    package static let adminListenerOnly = APIError(
        .unauthorized,
        message: "The admin listener serves admin callers only: send Authorization: Bearer with an admin token.",
        status: "UNAUTHENTICATED",
        reason: "unauthorized"
    )

    /// 403 for a project-scoped path without an admin bearer for that project.
    package static let permissionDenied = APIError(
        .forbidden,
        message: "The caller does not have permission",
        status: "PERMISSION_DENIED",
        reason: "forbidden"
    )

    /// 403 for a client path with neither bearer nor API key.
    package static let missingAPIKey = APIError(
        .forbidden,
        message: "The request is missing a valid API key.",
        status: "PERMISSION_DENIED",
        reason: "forbidden"
    )

    /// 400 for an API key this project does not accept.
    package static let invalidAPIKey = APIError(
        .badRequest,
        message: "API key not valid. Please pass a valid API key.",
        status: "INVALID_ARGUMENT",
        reason: "badRequest"
    )

    /// 500 for our own faults; the body says only where to look in the logs.
    package static func internalError(requestID: String) -> APIError {
        APIError(
            .internalServerError,
            message: "INTERNAL : An internal error occurred (request \(requestID)).",
            status: "INTERNAL",
            reason: "backendError"
        )
    }

    /// 503 with `Retry-After: 1` for a lock or database timeout the client may retry.
    package static func unavailable(_ detail: String = "The service is busy, retry shortly.") -> APIError {
        var error = APIError(.serviceUnavailable, message: "UNAVAILABLE : \(detail)", status: "UNAVAILABLE", reason: "backendError")
        error.headers[.retryAfter] = "1"
        return error
    }

    /// The business error's wire form: 400, `CODE` or `CODE : detail`, no status.
    package init(_ error: AccountError) {
        if error.code == .unavailable {
            self = .unavailable(error.detail ?? "The service is busy, retry shortly.")
            return
        }
        if error.code == .importFault, let message = error.detail {
            self.init(.badRequest, message: message)
            return
        }
        if error.code == .malformedRequest, let message = error.detail {
            self.init(.badRequest, message: message, status: "INVALID_ARGUMENT")
            return
        }
        let code = error.code.firebaseMessage
        self.init(.badRequest, message: error.detail.map { "\(code) : \($0)" } ?? code)
        // The v2 configuration resources answer with an HTTP status and a `status` (federation-and-limits.md §B.3).
        switch error.code {
        case .configurationNotFound: (httpStatus, status) = (.notFound, "NOT_FOUND")
        case .configurationExists: (httpStatus, status) = (.conflict, "ALREADY_EXISTS")
        case .missingConfigID, .invalidConfigID, .missingOAuthClientID, .missingIssuer, .invalidIssuer, .invalidConfig,
            .emailTemplateUpdateNotAllowed, .invalidAdjacentIntervalRange, .invalidAuthorizedDomain:
            status = "INVALID_ARGUMENT"
        default: break
        }
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
    }
}
