package import AccountCore
package import Foundation
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
            let rows = try await database.execute(Prepared.UserByEmail(tenant: tenant, email: email), logger: logger)
            for row in rows { return try Self.decodeUser(row) }
            return nil
        }
    }

    /// Two statements however many identifiers: their owners in one, then those users as a
    /// lookup by uid reads them.
    package func users(federatedIDs: [(providerID: String, rawID: String)]) async throws -> [UserRecord] {
        guard !federatedIDs.isEmpty else { return [] }
        let localIDs = try await translating {
            try await onConnection { tx in
                var owners: [String] = []
                for try await localID in try await tx.query(
                    """
                    SELECT DISTINCT f.local_id FROM federated_identities f
                    JOIN unnest(\(federatedIDs.map(\.providerID))::text[], \(federatedIDs.map(\.rawID))::text[]) AS k(provider_id, raw_id)
                        ON f.provider_id = k.provider_id AND f.raw_id = k.raw_id
                    WHERE f.tenant_id = \(tenant)
                    """
                ).decode(String.self) {
                    owners.append(localID)
                }
                return owners
            }
        }
        return localIDs.isEmpty ? [] : try await users(localIDs: localIDs, emails: [], phoneNumbers: [])
    }

    package func users(localIDs: [String], emails: [String], phoneNumbers: [String]) async throws -> [UserRecord] {
        try await translating {
            var found: [UserRecord] = []
            var seen = Set<String>()
            /// The single-value statement for one identifier (its plan is cached), the list one otherwise.
            func statement(_ values: [String], one: (String) -> any PreparedQuery, many: ([String]) -> any PreparedQuery)
                -> (any PreparedQuery)?
            {
                switch values.count {
                case 0: nil
                case 1: one(values[0])
                default: many(values)
                }
            }
            let tenant = self.tenant
            let statements = [
                statement(
                    localIDs, one: { Prepared.UserByLocalID(tenant: tenant, localID: $0) },
                    many: { Prepared.UsersByLocalIDs(tenant: tenant, localIDs: $0) }),
                statement(
                    emails.map { $0.lowercased() }, one: { Prepared.UserByEmail(tenant: tenant, email: $0) },
                    many: { Prepared.UsersByEmails(tenant: tenant, emails: $0) }),
                statement(
                    phoneNumbers, one: { Prepared.UserByPhoneNumber(tenant: tenant, phoneNumber: $0) },
                    many: { Prepared.UsersByPhoneNumbers(tenant: tenant, phoneNumbers: $0) }),
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
            try await tx.insertUsers([user])
            var ticket: MintTicket?
            if let session {
                ticket = try await tx.insertSession(session, user: user, now: now)
            }
            try await tx.audit(
                .userCreated, localID: user.localID, details: ["email": user.email ?? ""], always: false)
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
            try await tx.carryOut(change.write(on: user, now: now), now: now)
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
                .userUpdated, localID: localID, details: change.summary, always: false)
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
                WHERE tenant_id = \(tenant) AND local_id = \(localID)
                """)
            try await tx.query(
                "UPDATE action_codes SET used_at = \(now), used_reason = 'USER_DELETED' WHERE tenant_id = \(tenant) AND local_id = \(localID) AND used_at IS NULL"
            )
            try await tx.query("DELETE FROM users WHERE tenant_id = \(tenant) AND local_id = \(localID)")
            try await tx.announce(.user(localID))
            try await tx.audit(.userDeleted, localID: localID, details: ["email": user.email ?? ""])
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
            INSERT INTO password_credentials (tenant_id, local_id, algorithm, hash, salt, parameters, updated_at)
            VALUES (\(tenant), \(localID), \(stored.algorithm), \(Data(stored.hash)), \(stored.salt.map { Data($0) }), \(parameters)::jsonb, \(now))
            ON CONFLICT (tenant_id, local_id) DO UPDATE SET algorithm = EXCLUDED.algorithm, hash = EXCLUDED.hash,
                salt = EXCLUDED.salt, parameters = EXCLUDED.parameters, updated_at = EXCLUDED.updated_at
            """)
    }

    /// Carries out what Core decided a change writes (``UserChange/write(on:now:)``): the row, then
    /// the password and the federated links; revocation is the caller's.
    func carryOut(_ write: AccountWrite, now: Date) async throws {
        let localID = write.user.localID
        try await writeUser(write.user)
        if let password = write.newPassword {
            try await writePassword(password, localID: localID, now: now)
            try await retireResetCodes(localID: localID, reason: "PASSWORD_CHANGED", now: now)
        }
        if let factors = write.factors {
            try await replaceFactors(factors, of: localID)
        }
        if write.removesPassword {
            try await query("DELETE FROM password_credentials WHERE tenant_id = \(tenant) AND local_id = \(localID)")
        }
        if !write.unlinks.isEmpty {
            try await query(
                "DELETE FROM federated_identities WHERE tenant_id = \(tenant) AND local_id = \(localID) AND provider_id = ANY(\(write.unlinks))"
            )
        }
        if let link = write.link {
            // The identity must be this user's or nobody's; the admin's entry replaces the user's own.
            for try await owner in try await query(
                """
                SELECT local_id FROM federated_identities
                WHERE tenant_id = \(tenant) AND provider_id = \(link.providerID) AND raw_id = \(link.rawID) FOR UPDATE
                """
            ).decode(String.self) where owner != localID {
                throw AccountError(.federatedUserIDAlreadyLinked)
            }
            try await query(
                "DELETE FROM federated_identities WHERE tenant_id = \(tenant) AND local_id = \(localID) AND provider_id = \(link.providerID)"
            )
            try await query(
                """
                INSERT INTO federated_identities (tenant_id, local_id, provider_id, raw_id, email, display_name, photo_url, linked_at)
                VALUES (\(tenant), \(localID), \(link.providerID), \(link.rawID), \(link.email), \(link.displayName), \(link.photoURL),
                    \(link.linkedAt))
                """)
        }
    }

    /// Retires every unspent password-reset code of the user: a new password makes them moot.
    func retireResetCodes(localID: String, reason: String, now: Date) async throws {
        try await query(
            """
            UPDATE action_codes SET used_at = \(now), used_reason = \(reason)
            WHERE tenant_id = \(tenant) AND local_id = \(localID) AND kind = 'PASSWORD_RESET' AND used_at IS NULL
            """)
    }

}
