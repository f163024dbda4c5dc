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
    /// The whole batch in four statements, each reading the batch as one JSON document
    /// (`json_to_recordset`), so that the round trips do not grow with the batch.
    func insertBatch(_ users: [UserRecord], now: Date) async throws {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func seconds(_ value: Date?) -> JSONValue { value.map { .double($0.timeIntervalSince1970) } ?? .null }
        var rows: [JSONValue] = []
        var passwords: [JSONValue] = []
        var links: [JSONValue] = []
        rows.reserveCapacity(users.count)
        passwords.reserveCapacity(users.count)
        for user in users {
            rows.append(
                .object([
                    "local_id": .string(user.localID), "email": text(user.email), "email_verified": .bool(user.emailVerified),
                    "display_name": text(user.displayName), "photo_url": text(user.photoURL), "phone_number": text(user.phoneNumber),
                    "disabled": .bool(user.disabled), "custom_attributes": text(user.customAttributes),
                    "created_at": seconds(user.createdAt), "last_login_at": seconds(user.lastLoginAt),
                ]))
            if let credential = user.password {
                let stored = credential.stored
                passwords.append(
                    .object([
                        "local_id": .string(user.localID), "algorithm": .string(stored.algorithm),
                        "hash": .string(Data(stored.hash).base64EncodedString()),
                        "salt": text(stored.salt.map { Data($0).base64EncodedString() }),
                        "parameters": .string(PostgresAccountStore.parametersJSON(stored.parameters)),
                        "updated_at": seconds(credential.updatedAt),
                    ]))
            }
            for link in user.federated {
                links.append(
                    .object([
                        "local_id": .string(user.localID), "provider_id": .string(link.providerID), "raw_id": .string(link.rawID),
                        "email": text(link.email), "display_name": text(link.displayName), "photo_url": text(link.photoURL),
                    ]))
            }
        }
        let document = JSONValue.array(rows).serialized()
        try await query(
            """
            INSERT INTO users (tenant_id, local_id, email, email_verified, display_name, photo_url, phone_number, disabled, custom_attributes,
                created_at, last_login_at, tokens_valid_after, valid_since)
            SELECT \(tenant), u.local_id, u.email, u.email_verified, u.display_name, u.photo_url, u.phone_number, u.disabled, u.custom_attributes,
                to_timestamp(u.created_at), to_timestamp(u.last_login_at), \(now), \(RevocationRules.seconds(now))
            FROM json_to_recordset(\(document)::json) AS u(local_id text, email text, email_verified boolean, display_name text,
                photo_url text, phone_number text, disabled boolean, custom_attributes text, created_at float8, last_login_at float8)
            """)
        if !passwords.isEmpty {
            try await query(
                """
                INSERT INTO password_credentials (tenant_id, local_id, algorithm, hash, salt, parameters, updated_at)
                SELECT \(tenant), p.local_id, p.algorithm, decode(p.hash, 'base64'), decode(p.salt, 'base64'), p.parameters::jsonb,
                    to_timestamp(p.updated_at)
                FROM json_to_recordset(\(JSONValue.array(passwords).serialized())::json)
                    AS p(local_id text, algorithm text, hash text, salt text, parameters text, updated_at float8)
                """)
        }
        if !links.isEmpty {
            try await query(
                """
                INSERT INTO federated_identities (tenant_id, local_id, provider_id, raw_id, email, display_name, photo_url, linked_at)
                SELECT \(tenant), f.local_id, f.provider_id, f.raw_id, f.email, f.display_name, f.photo_url, \(now)
                FROM json_to_recordset(\(JSONValue.array(links).serialized())::json)
                    AS f(local_id text, provider_id text, raw_id text, email text, display_name text, photo_url text)
                """)
        }
        // The per-user audit rows `insertImported` writes, for an admin caller, in one statement.
        if case .admin(let name)? = AuditContext.actor {
            try await query(
                """
                INSERT INTO audit_events (tenant_id, actor_type, actor, action, local_id, details)
                SELECT \(tenant), 'admin', \(name), \(AuditAction.userImported.rawValue), u.local_id, jsonb_build_object('email', coalesce(u.email, ''))
                FROM json_to_recordset(\(document)::json) AS u(local_id text, email text)
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
                let translated = PostgresAccountStore.translate(error)
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

    /// Imported instants go through `to_timestamp`, which rounds to the microsecond, as the bulk
    /// path does: binding a `Date` truncates, and 1600000000.123 s would read back as …122 ms.
    func insertImported(_ user: UserRecord, now: Date) async throws {
        try await query(
            """
            INSERT INTO users (tenant_id, local_id, email, email_verified, display_name, photo_url, phone_number, disabled, custom_attributes,
                created_at, last_login_at, tokens_valid_after, valid_since)
            VALUES (\(tenant), \(user.localID), \(user.email), \(user.emailVerified), \(user.displayName), \(user.photoURL), \(user.phoneNumber),
                \(user.disabled), \(user.customAttributes), to_timestamp(\(user.createdAt.timeIntervalSince1970)),
                to_timestamp(\(user.lastLoginAt?.timeIntervalSince1970)), \(now), \(RevocationRules.seconds(now)))
            """)
        if let credential = user.password {
            try await writePassword(credential.stored, localID: user.localID, now: credential.updatedAt)
        }
        for link in user.federated {
            try await query(
                """
                INSERT INTO federated_identities (tenant_id, local_id, provider_id, raw_id, email, display_name, photo_url, linked_at)
                VALUES (\(tenant), \(user.localID), \(link.providerID), \(link.rawID), \(link.email), \(link.displayName), \(link.photoURL), \(now))
                """)
        }
        try await audit(
            .userImported, localID: user.localID, details: ["email": user.email ?? ""], always: false)
    }
}
