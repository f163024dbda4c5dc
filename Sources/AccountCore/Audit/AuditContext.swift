/// Who is acting, for the audit trail. The API layer sets it for the request's task; the store
/// writes an `audit_events` row inside each change's transaction, so a change and its record
/// commit together.
package enum AuditActor: Sendable, Equatable {
    /// An admin caller, by the configured name of its token.
    case admin(String)
    /// A signed-in user acting on their own account.
    case user(String)
    /// accountd itself (rules such as refresh-token reuse).
    case system

    /// `actor_type` column.
    package var type: String {
        switch self {
        case .admin: "admin"
        case .user: "user"
        case .system: "system"
        }
    }

    /// `actor` column.
    package var name: String {
        switch self {
        case .admin(let name): name
        case .user(let id): id
        case .system: "accountd"
        }
    }
}

/// The acting party of the current task.
package enum AuditContext {
    /// Set by the API layer around each request.
    @TaskLocal package static var actor: AuditActor?
}

/// One row of the audit trail.
package struct AuditEvent: Sendable, Equatable {
    package var occurredAt: Double
    package var actorType: String
    package var actor: String
    package var action: String
    package var localID: String?
    package var details: String

    /// Creates an event.
    package init(occurredAt: Double, actorType: String, actor: String, action: String, localID: String?, details: String) {
        self.occurredAt = occurredAt
        self.actorType = actorType
        self.actor = actor
        self.action = action
        self.localID = localID
        self.details = details
    }
}
