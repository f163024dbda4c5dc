public import AccountCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresAccountStore: UserImportStore {
    /// One transaction for the batch, one savepoint per user: a user that fails (email taken,
    /// overwrite refused) rolls back alone and is reported by index.
    package func importUsers(_ users: [(index: Int, user: UserRecord)], allowOverwrite: Bool, now: Date) async throws -> [Int: String] {
        try await translating {
            try await client.withTransaction(logger: logger) { connection in
                var errors: [Int: String] = [:]
                for (index, user) in users {
                    try await connection.query("SAVEPOINT import_user", logger: logger)
                    do {
                        if let existing = try await Self.user(localID: user.localID, on: connection, logger: logger, lock: true) {
                            guard allowOverwrite else {
                                throw AccountError(.duplicateLocalID, "localId already exists and allowOverwrite is false")
                            }
                            _ = try await Self.revokeAll(
                                user: existing, reason: .accountOverwritten, now: now, on: connection, logger: logger)
                            try await connection.query(
                                "DELETE FROM users WHERE tenant_id = '' AND local_id = \(user.localID)", logger: logger)
                        }
                        try await Self.insertImported(user, now: now, on: connection, logger: logger)
                        try await connection.query("RELEASE SAVEPOINT import_user", logger: logger)
                    } catch {
                        try await connection.query("ROLLBACK TO SAVEPOINT import_user", logger: logger)
                        let translated = Self.translate(error)
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
        }
    }

    static func insertImported(_ user: UserRecord, now: Date, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO users (local_id, email, email_verified, display_name, photo_url, phone_number, disabled, custom_attributes,
                created_at, last_login_at, tokens_valid_after, valid_since)
            VALUES (\(user.localID), \(user.email), \(user.emailVerified), \(user.displayName), \(user.photoURL), \(user.phoneNumber),
                \(user.disabled), \(user.customAttributes), \(user.createdAt), \(user.lastLoginAt), \(now), \(RevocationRules.seconds(now)))
            """,
            logger: logger
        )
        if let credential = user.password {
            try await writePassword(credential.stored, localID: user.localID, now: credential.updatedAt, on: connection, logger: logger)
        }
        for link in user.federated {
            try await connection.query(
                """
                INSERT INTO federated_identities (local_id, provider_id, raw_id, email, display_name, photo_url, linked_at)
                VALUES (\(user.localID), \(link.providerID), \(link.rawID), \(link.email), \(link.displayName), \(link.photoURL), \(now))
                """,
                logger: logger
            )
        }
        try await audit(
            "user.import", localID: user.localID, details: ["email": user.email ?? ""], always: false, on: connection, logger: logger)
    }
}
