package import AccountCore
package import Foundation
import Logging
import PostgresNIO

extension PostgresAccountStore: UserImportStore {
    /// One transaction for the batch. First the whole batch goes in as set-based INSERTs (a few
    /// statements per 1000 users). Any uniqueness conflict (an existing localId, a taken email,
    /// phone or federated id, a duplicate inside the batch) rolls that attempt back to its
    /// savepoint and the batch is redone user by user, one savepoint each, so that a user that
    /// fails (email taken, overwrite refused) rolls back alone and is reported by index.
    package func importUsers(_ users: [(index: Int, user: UserRecord)], allowOverwrite: Bool, now: Date) async throws -> [Int: String] {
        try await transaction { tx in
            if users.isEmpty { return [:] }
            try await tx.query("SAVEPOINT import_batch")
            do {
                try await tx.insertBatch(users.map(\.user), now: now)
                try await tx.query("RELEASE SAVEPOINT import_batch")
                return [:]
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                try await tx.query("ROLLBACK TO SAVEPOINT import_batch")
            }
            return try await tx.importOneByOne(users, allowOverwrite: allowOverwrite, now: now)
        }
    }

}

extension StoreTransaction {
    /// The whole batch in a few statements however large (``copyUsers(_:)``, or
    /// ``insertUsers(_:ifAbsent:)`` for instants it cannot write, then the audit rows), so that
    /// the round trips do not grow with the batch.
    func insertBatch(_ users: [UserRecord], now: Date) async throws {
        if try await !copyUsers(users) { try await insertUsers(users) }
        // The per-user audit rows `insertImported` writes, for an admin caller, in one statement.
        if case .admin(let name)? = AuditContext.actor {
            try await query(
                """
                INSERT INTO audit_events (tenant_id, actor_type, actor, action, local_id, details)
                SELECT \(tenant), 'admin', \(name), \(AuditAction.userImported.rawValue), u.local_id, jsonb_build_object('email', u.email)
                FROM unnest(\(users.map(\.localID))::text[], \(users.map { $0.email ?? "" })::text[]) AS u(local_id, email)
                """)
        }
    }

    /// One savepoint per user: the path for a batch that conflicts with stored users or itself.
    func importOneByOne(
        _ users: [(index: Int, user: UserRecord)], allowOverwrite: Bool, now: Date
    ) async throws -> [Int: String] {
        var errors: [Int: String] = [:]
        for (index, user) in users {
            try await query("SAVEPOINT import_user")
            do {
                if let existing = try await self.user(localID: user.localID, lock: true) {
                    guard allowOverwrite else {
                        throw AccountError(.duplicateLocalID, "localId already exists and allowOverwrite is false")
                    }
                    _ = try await revokeAll(
                        user: existing, reason: .accountOverwritten, now: now)
                    try await query("DELETE FROM users WHERE tenant_id = \(tenant) AND local_id = \(user.localID)")
                }
                try await insertImported(user, now: now)
                try await query("RELEASE SAVEPOINT import_user")
            } catch {
                try await query("ROLLBACK TO SAVEPOINT import_user")
                let translated = PostgresStore.translate(error)
                guard let accountError = translated as? AccountError else { throw translated }
                errors[index] =
                    switch accountError.code {
                    case .emailExists: "email exists in other account in database"
                    case .phoneNumberExists: "phone number exists in other account in database"
                    default: accountError.detail ?? accountError.code.rawValue
                    }
            }
        }
        return errors
    }

    /// One imported user, as the batch inserts them.
    func insertImported(_ user: UserRecord, now: Date) async throws {
        try await insertUsers([user])
        try await audit(
            .userImported, localID: user.localID, details: ["email": user.email ?? ""], always: false)
    }
}
