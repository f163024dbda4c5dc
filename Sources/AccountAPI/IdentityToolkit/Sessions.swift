import AccountCore
import Foundation

/// `accounts:listSessions` and `accounts:revokeSessions` (identity-toolkit.md §4.18, admin).
enum SessionsRPC {
    struct SessionWire: Encodable, Sendable {
        var sessionId: String
        var localId: String
        var signInProvider: String
        var signInMethod: String
        var createdAt: String
        var authTime: String
        var lastRefreshAt: String?
        var expiresAt: String?
        var userAgent: String?
        var ipAddress: String?
        var revokedAt: String?
        var revokeReason: String?

        init(_ session: SessionRecord) {
            sessionId = session.sessionID
            localId = session.localID
            signInProvider = session.signInProvider
            signInMethod = session.signInMethod
            createdAt = String(UserInfoWire.milliseconds(session.createdAt))
            authTime = String(session.authTime)
            lastRefreshAt = session.lastRefreshAt.map { String(UserInfoWire.milliseconds($0)) }
            expiresAt = session.expiresAt.map { String(UserInfoWire.milliseconds($0)) }
            userAgent = session.userAgent
            ipAddress = session.ipAddress
            revokedAt = session.revokedAt.map { String(UserInfoWire.milliseconds($0)) }
            revokeReason = session.revokeReason?.rawValue
        }
    }

    struct ListResponse: Encodable, Sendable {
        var sessions: [SessionWire]
        var nextPageToken: String?
    }

    struct RevokeResponse: Encodable, Sendable {
        var localId: String
        var revokedSessionIds: [String]
        var validSince: String
    }

    static func list(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            let limit = Int(min(max(try call.body.int64("maxResults") ?? 100, 1), 1000))
            var cursor: SessionCursor?
            if let token = try call.body.nonEmptyString("nextPageToken") {
                let parts = token.split(separator: ".", maxSplits: 1)
                guard parts.count == 2, let micros = Int64(parts[0]) else { throw AccountError(.invalidPageSelection) }
                cursor = SessionCursor(createdAt: Date(timeIntervalSince1970: Double(micros) / 1_000_000), sessionID: String(parts[1]))
            }
            let sessions = try await service.listSessions(
                localID: try call.body.string("localId"), includeRevoked: try call.body.bool("includeRevoked") ?? false,
                limit: limit + 1, before: cursor
            )
            let page = Array(sessions.prefix(limit))
            let next =
                sessions.count > limit
                ? page.last.map { "\(Int64(($0.createdAt.timeIntervalSince1970 * 1_000_000).rounded())).\($0.sessionID)" } : nil
            return try WireEncoding.response(ListResponse(sessions: page.map(SessionWire.init), nextPageToken: next))
        }
    }

    static func revoke(_ service: AccountService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            let localID = try call.body.string("localId")
            let (revoked, validSince) = try await service.revokeSessions(localID: localID, sessionIDs: try call.body.strings("sessionIds"))
            return try WireEncoding.response(
                RevokeResponse(localId: localID ?? "", revokedSessionIds: revoked, validSince: String(validSince)))
        }
    }
}
