public import AccountCore
public import Foundation
import Logging
import PostgresNIO

/// Accounts: reads of a user, creation, update and deletion.
extension PostgresAccountStore {
    package func user(localID: String) async throws -> UserRecord? {
        try await translating {
            try await onConnection { tx in try await tx.user(localID: localID, lock: false) }
        }
    }

    package func user(email: String) async throws -> UserRecord? {
        try await translating {
            let rows = try await database.execute(Prepared.UserByEmail(binds: Self.binds(email)), logger: logger)
            for row in rows { return try Self.decodeUser(row) }
            return nil
        }
    }

    package func users(localIDs: [String], emails: [String], phoneNumbers: [String]) async throws -> [UserRecord] {
        try await translating {
            var found: [UserRecord] = []
            var seen = Set<String>()
            /// The single-value statement for one identifier (its plan is cached), the list one otherwise.
            func statement(_ values: [String], one: (PostgresBindings) -> any PreparedQuery, many: (PostgresBindings) -> any PreparedQuery)
                -> (any PreparedQuery)?
            {
                var binds = PostgresBindings()
                switch values.count {
                case 0: return nil
                case 1: binds.append(values[0]); return one(binds)
                default: binds.append(values); return many(binds)
                }
            }
            let statements = [
                statement(localIDs, one: Prepared.UserByLocalID.init, many: Prepared.UsersByLocalIDs.init),
                statement(emails.map { $0.lowercased() }, one: Prepared.UserByEmail.init, many: Prepared.UsersByEmails.init),
                statement(phoneNumbers, one: Prepared.UserByPhoneNumber.init, many: Prepared.UsersByPhoneNumbers.init),
            ]
            for statement in statements.compactMap(\.self) {
                let rows = try await database.execute(statement, logger: logger)
                for row in rows {
                    let user = try Self.decodeUser(row)
                    if seen.insert(user.localID).inserted { found.append(user) }
                }
            }
            return found
        }
    }

    package func createUser(_ user: UserRecord, session: NewSession?, now: Date) async throws -> (UserRecord, MintTicket?) {
        try await transaction { tx in
            try await tx.query(
                """
                INSERT INTO users (local_id, email, email_verified, email_link_signin, initial_email, display_name, photo_url,
                    phone_number, disabled, custom_attributes, custom_auth, created_at, last_login_at, tokens_valid_after, valid_since)
                VALUES (\(user.localID), \(user.email), \(user.emailVerified), \(user.emailLinkSignin), \(user.initialEmail),
                    \(user.displayName), \(user.photoURL), \(user.phoneNumber), \(user.disabled), \(user.customAttributes),
                    \(user.customAuth), \(user.createdAt), \(session == nil ? nil : now), \(user.tokensValidAfter), \(user.validSince))
                """)
            if let credential = user.password {
                try await tx.writePassword(
                    credential.stored, localID: user.localID, now: credential.updatedAt)
            }
            var ticket: MintTicket?
            if let session {
                ticket = try await tx.insertSession(session, user: user, now: now)
            }
            try await tx.audit(
                "user.create", localID: user.localID, details: ["email": user.email ?? ""], always: false)
            let created = try await tx.user(localID: user.localID, lock: false)!
            return (created, ticket)
        }
    }

    package func update(
        localID: String, guardSession: SessionGuard?, change: UserChange, replacement: NewSession?, now: Date
    ) async throws -> (UserRecord, MintTicket?, SessionRecord?) {
        try await transaction { tx in
            guard let user = try await tx.user(localID: localID, lock: true) else {
                throw AccountError(.userNotFound)
            }
            if let guardSession { try await tx.check(guardSession, user: user) }
            try await tx.apply(change, to: user, now: now)
            for notice in change.notices {
                try await tx.insert(notice, restoreEmailVerified: user.emailVerified)
            }
            var current = user
            if let reason = change.revokeReason(for: user) {
                current.validSince = try await tx.revokeAll(user: user, reason: reason, now: now)
                    .validSince
            }
            var ticket: MintTicket?
            if let replacement {
                ticket = try await tx.insertSession(replacement, user: current, now: now)
            }
            if change.changesTokenState {
                try await tx.announce(.user(localID))
            }
            try await tx.audit(
                "user.update", localID: localID, details: change.summary, always: false)
            let updated = try await tx.user(localID: localID, lock: false)!
            return (updated, ticket, nil)
        }
    }

    package func delete(localID: String, guardSession: SessionGuard?, now: Date) async throws {
        try await transaction { tx in
            guard let user = try await tx.user(localID: localID, lock: true) else {
                throw AccountError(.userNotFound)
            }
            if let guardSession { try await tx.check(guardSession, user: user) }
            try await tx.query(
                """
                UPDATE sessions SET revoked_at = coalesce(revoked_at, \(now)),
                    revoke_reason = coalesce(revoke_reason, \(RevokeReason.userDeleted.rawValue)), user_deleted = true
                WHERE tenant_id = '' AND local_id = \(localID)
                """)
            try await tx.query(
                "UPDATE action_codes SET used_at = \(now), used_reason = 'USER_DELETED' WHERE tenant_id = '' AND local_id = \(localID) AND used_at IS NULL"
            )
            try await tx.query("DELETE FROM users WHERE tenant_id = '' AND local_id = \(localID)")
            try await tx.announce(.user(localID))
            try await tx.audit("user.delete", localID: localID, details: ["email": user.email ?? ""])
        }
    }

    /// Imported hash parameters as the `parameters` jsonb column stores them; ``decodeUser(_:)``
    /// reads them back.
    static func parametersJSON(_ parameters: [String: String]) -> String {
        JSONValue.object(parameters.mapValues(JSONValue.string)).serialized()
    }

}

extension StoreTransaction {

    func writePassword(_ stored: StoredPassword, localID: String, now: Date)
        async throws
    {
        let parameters = PostgresAccountStore.parametersJSON(stored.parameters)
        try await query(
            """
            INSERT INTO password_credentials (local_id, algorithm, hash, salt, parameters, updated_at)
            VALUES (\(localID), \(stored.algorithm), \(Data(stored.hash)), \(stored.salt.map { Data($0) }), \(parameters)::jsonb, \(now))
            ON CONFLICT (tenant_id, local_id) DO UPDATE SET algorithm = EXCLUDED.algorithm, hash = EXCLUDED.hash,
                salt = EXCLUDED.salt, parameters = EXCLUDED.parameters, updated_at = EXCLUDED.updated_at
            """)
    }

    /// Writes the fields of a change (identity-toolkit.md §4.7 effects); revocation is the caller's.
    func apply(_ change: UserChange, to user: UserRecord, now: Date) async throws {
        let localID = user.localID
        func set(_ column: String, _ value: FieldChange<String>) async throws {
            switch value {
            case .keep: return
            case .set(let text):
                var binds = PostgresBindings()
                binds.append(text)
                binds.append(localID)
                try await query(
                    PostgresQuery(unsafeSQL: "UPDATE users SET \(column) = $1 WHERE tenant_id = '' AND local_id = $2", binds: binds))
            case .clear:
                try await query(
                    PostgresQuery(
                        unsafeSQL: "UPDATE users SET \(column) = NULL WHERE tenant_id = '' AND local_id = $1",
                        binds: PostgresAccountStore.binds(localID)))
            }
        }
        try await set("display_name", change.displayName)
        try await set("photo_url", change.photoURL)
        try await set("phone_number", change.phoneNumber)
        try await set("custom_attributes", change.customAttributes)
        if case .set(let email) = change.email {
            try await query(
                """
                UPDATE users SET email = \(email), email_verified = \(change.emailVerified ?? false), email_link_signin = false,
                    initial_email = coalesce(initial_email, email)
                WHERE tenant_id = '' AND local_id = \(localID)
                """)
        } else if case .clear = change.email {
            try await query(
                "UPDATE users SET email = NULL, email_verified = false, email_link_signin = false WHERE tenant_id = '' AND local_id = \(localID)"
            )
        } else if let verified = change.emailVerified {
            try await query("UPDATE users SET email_verified = \(verified) WHERE tenant_id = '' AND local_id = \(localID)")
        }
        if let password = change.password {
            try await writePassword(password, localID: localID, now: now)
            try await query("UPDATE users SET credential_version = credential_version + 1 WHERE tenant_id = '' AND local_id = \(localID)")
            try await query(
                """
                UPDATE action_codes SET used_at = \(now), used_reason = 'PASSWORD_CHANGED'
                WHERE tenant_id = '' AND local_id = \(localID) AND kind = 'PASSWORD_RESET' AND used_at IS NULL
                """)
        }
        for provider in change.deleteProviders {
            switch provider {
            case "password":
                try await query("DELETE FROM password_credentials WHERE tenant_id = '' AND local_id = \(localID)")
                try await query(
                    """
                    UPDATE users SET email_link_signin = false, credential_version = credential_version + 1
                    WHERE tenant_id = '' AND local_id = \(localID)
                    """)
            case "phone":
                try await query("UPDATE users SET phone_number = NULL WHERE tenant_id = '' AND local_id = \(localID)")
            default:
                try await query(
                    "DELETE FROM federated_identities WHERE tenant_id = '' AND local_id = \(localID) AND provider_id = \(provider)")
            }
        }
        if let disabled = change.disabled {
            try await query("UPDATE users SET disabled = \(disabled) WHERE tenant_id = '' AND local_id = \(localID)")
        }
        if let createdAt = change.createdAt {
            try await query("UPDATE users SET created_at = \(createdAt) WHERE tenant_id = '' AND local_id = \(localID)")
        }
        if let lastLoginAt = change.lastLoginAt {
            try await query("UPDATE users SET last_login_at = \(lastLoginAt) WHERE tenant_id = '' AND local_id = \(localID)")
        }
    }
}
