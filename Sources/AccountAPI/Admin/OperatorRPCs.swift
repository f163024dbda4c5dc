import AccountCore
import Foundation

/// Operator RPCs of ours used by `accountctl` (admin only): the audit trail and signing keys.
enum OperatorRPCs {
    struct AuditWire: Encodable, Sendable {
        var occurredAt: String
        var actorType: String
        var actor: String
        var action: String
        var localId: String?
        var details: String
    }

    struct KeyWire: Encodable, Sendable {
        var kid: String
        var state: String
        var createdAt: String
        var activatedAt: String?
        var retiredAt: String?
        var removeAfter: String?
    }

    static func ms(_ date: Date) -> String { String(UserInfoWire.milliseconds(date)) }

    static func audit(_ service: AdminService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            let limit = Int(min(max(try call.body.int64("maxResults") ?? 100, 1), 1000))
            let events = try await service.auditEvents(localID: try call.body.nonEmptyString("localId"), limit: limit)
            return try WireEncoding.response([
                "events": events.map {
                    AuditWire(
                        occurredAt: String(Int64($0.occurredAt * 1000)), actorType: $0.actorType, actor: $0.actor, action: $0.action,
                        localId: $0.localID, details: $0.details
                    )
                }
            ])
        }
    }

    static func listKeys(_ service: AdminService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { _ in
            let keys = try await service.keys.keySummaries()
            return try WireEncoding.response([
                "keys": keys.map {
                    KeyWire(
                        kid: $0.kid, state: $0.state, createdAt: ms($0.createdAt), activatedAt: $0.activatedAt.map(ms),
                        retiredAt: $0.retiredAt.map(ms), removeAfter: $0.removeAfter.map(ms)
                    )
                }
            ])
        }
    }

    static func getSession(_ service: AdminService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            guard let id = try call.body.nonEmptyString("sessionId") else { throw AccountError(.sessionNotFound, "sessionId is missing") }
            guard let owner = try await service.sessionOwner(sessionID: id) else { throw AccountError.sessionNotFound(id) }
            return try WireEncoding.response(["localId": owner, "sessionId": id])
        }
    }

    static func rotateKeys(_ service: AdminService) -> RPCEndpoint {
        RPCEndpoint(access: .adminOnly) { call in
            let kid = try await service.keys.rotate(immediately: try call.body.bool("immediately") ?? false)
            return try WireEncoding.response(["kid": kid])
        }
    }
}
