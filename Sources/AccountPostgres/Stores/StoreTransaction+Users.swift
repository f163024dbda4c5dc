import AccountCore
import Foundation
import PostgresNIO

/// The two ways an account's row is written, whatever the feature: new accounts as Core's
/// constructors shape them (``insertUsers(_:ifAbsent:)``), and an account's fields as a Core rule
/// decided them (``writeUser(_:)``, the row locked by the read the rule decided on). Instants go
/// through `to_timestamp`, which rounds to the microsecond: binding a `Date` truncates, so a stored
/// 1600000000.123 s would come back as …122 ms on each rewrite.
extension StoreTransaction {
    /// Inserts new accounts with their passwords and links: three statements however many
    /// accounts, each reading the batch as one JSON document (`json_to_recordset`). `ifAbsent`
    /// skips an account whose id is taken (a concurrent first sign-in won) instead of refusing it.
    /// Returns the ids inserted.
    @discardableResult
    func insertUsers(_ users: [UserRecord], ifAbsent: Bool = false) async throws -> Set<String> {
        guard !users.isEmpty else { return [] }
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func seconds(_ value: Date?) -> JSONValue { value.map { .double($0.timeIntervalSince1970) } ?? .null }
        let rows = users.map { user in
            JSONValue.object([
                "local_id": .string(user.localID), "email": text(user.email), "email_verified": .bool(user.emailVerified),
                "email_link_signin": .bool(user.emailLinkSignin), "initial_email": text(user.initialEmail),
                "display_name": text(user.displayName), "photo_url": text(user.photoURL), "phone_number": text(user.phoneNumber),
                "disabled": .bool(user.disabled), "custom_attributes": text(user.customAttributes), "custom_auth": .bool(user.customAuth),
                "anonymous": .bool(user.anonymous), "created_at": seconds(user.createdAt), "last_login_at": seconds(user.lastLoginAt),
                "tokens_valid_after": seconds(user.tokensValidAfter), "valid_since": .int(user.validSince),
                "credential_version": .int(user.credentialVersion),
            ])
        }
        var inserted = Set<String>()
        for try await localID in try await query(
            """
            INSERT INTO users (tenant_id, local_id, email, email_verified, email_link_signin, initial_email, display_name, photo_url,
                phone_number, disabled, custom_attributes, custom_auth, anonymous, created_at, last_login_at, tokens_valid_after, valid_since,
                credential_version)
            SELECT \(tenant), u.local_id, u.email, u.email_verified, u.email_link_signin, u.initial_email, u.display_name, u.photo_url,
                u.phone_number, u.disabled, u.custom_attributes, u.custom_auth, u.anonymous, to_timestamp(u.created_at),
                to_timestamp(u.last_login_at), to_timestamp(u.tokens_valid_after), u.valid_since, u.credential_version
            FROM json_to_recordset(\(JSONValue.array(rows).serialized())::json) AS u(local_id text, email text, email_verified boolean,
                email_link_signin boolean, initial_email text, display_name text, photo_url text, phone_number text, disabled boolean,
                custom_attributes text, custom_auth boolean, anonymous boolean, created_at float8, last_login_at float8,
                tokens_valid_after float8, valid_since int8, credential_version int8)
            \(unescaped: ifAbsent ? "ON CONFLICT (tenant_id, local_id) DO NOTHING" : "")
            RETURNING local_id
            """
        ).decode(String.self) {
            inserted.insert(localID)
        }
        let written = users.filter { inserted.contains($0.localID) }
        let passwords = written.compactMap { user in
            user.password.map { credential in
                JSONValue.object([
                    "local_id": .string(user.localID), "algorithm": .string(credential.stored.algorithm),
                    "hash": .string(Data(credential.stored.hash).base64EncodedString()),
                    "salt": text(credential.stored.salt.map { Data($0).base64EncodedString() }),
                    "parameters": .string(PostgresAccountStore.parametersJSON(credential.stored.parameters)),
                    "updated_at": seconds(credential.updatedAt),
                ])
            }
        }
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
        try await insertDependents(written)
        return inserted
    }

    /// What new accounts bring beside their rows and passwords: their links and phone factors, in
    /// a statement each, and the sign-ups counted.
    private func insertDependents(_ users: [UserRecord]) async throws {
        for user in users { count(.signUps, [Telemetry.creationProvider(user)]) }
        try await insertLinks(users)
        try await insertPhoneFactors(users.flatMap { user in user.factors.filter { $0.kind == .phone }.map { (user.localID, $0) } })
    }

    /// The federated identities of new accounts, in one statement.
    private func insertLinks(_ users: [UserRecord]) async throws {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func seconds(_ value: Date?) -> JSONValue { value.map { .double($0.timeIntervalSince1970) } ?? .null }
        let links = users.flatMap { user in
            user.federated.map { link in
                JSONValue.object([
                    "local_id": .string(user.localID), "provider_id": .string(link.providerID), "raw_id": .string(link.rawID),
                    "email": text(link.email), "display_name": text(link.displayName), "photo_url": text(link.photoURL),
                    "linked_at": seconds(link.linkedAt),
                ])
            }
        }
        if !links.isEmpty {
            try await query(
                """
                INSERT INTO federated_identities (tenant_id, local_id, provider_id, raw_id, email, display_name, photo_url, linked_at)
                SELECT \(tenant), f.local_id, f.provider_id, f.raw_id, f.email, f.display_name, f.photo_url, to_timestamp(f.linked_at)
                FROM json_to_recordset(\(JSONValue.array(links).serialized())::json)
                    AS f(local_id text, provider_id text, raw_id text, email text, display_name text, photo_url text, linked_at float8)
                """)
        }
    }

    /// Inserts new accounts as ``insertUsers(_:)`` does, the rows and their passwords by `COPY`
    /// (``CopyText``): the import's clean batch. A taken id, email or phone fails the `COPY` with
    /// `23505`, as the `INSERT` would. False, with nothing sent, when an instant is outside what
    /// ``CopyText`` writes; the caller then inserts the batch with ``insertUsers(_:ifAbsent:)``.
    func copyUsers(_ users: [UserRecord]) async throws -> Bool {
        guard !users.isEmpty else { return true }
        var rows = CopyText(capacity: users.count * 256)
        var passwords = CopyText(capacity: users.count * 192)
        for user in users {
            rows.text(tenant)
            rows.text(user.localID)
            rows.text(user.email)
            rows.bool(user.emailVerified)
            rows.bool(user.emailLinkSignin)
            rows.text(user.initialEmail)
            rows.text(user.displayName)
            rows.text(user.photoURL)
            rows.text(user.phoneNumber)
            rows.bool(user.disabled)
            rows.text(user.customAttributes)
            rows.bool(user.customAuth)
            rows.bool(user.anonymous)
            guard rows.timestamp(user.createdAt), rows.timestamp(user.lastLoginAt), rows.timestamp(user.tokensValidAfter) else {
                return false
            }
            rows.int(user.validSince)
            rows.int(user.credentialVersion)
            rows.endRow()
            if let credential = user.password {
                passwords.text(tenant)
                passwords.text(user.localID)
                passwords.text(credential.stored.algorithm)
                passwords.bytes(credential.stored.hash)
                passwords.bytes(credential.stored.salt)
                passwords.text(PostgresAccountStore.parametersJSON(credential.stored.parameters))
                guard passwords.timestamp(credential.updatedAt) else { return false }
                passwords.endRow()
            }
        }
        try await copy(into: "users", columns: Self.userColumns, rows: rows)
        if users.contains(where: { $0.password != nil }) {
            try await copy(
                into: "password_credentials", columns: ["tenant_id", "local_id", "algorithm", "hash", "salt", "parameters", "updated_at"],
                rows: passwords)
        }
        try await insertDependents(users)
        return true
    }

    /// The columns a new account's row is written with, in ``copyUsers(_:)``'s order.
    private static let userColumns = [
        "tenant_id", "local_id", "email", "email_verified", "email_link_signin", "initial_email", "display_name", "photo_url",
        "phone_number", "disabled", "custom_attributes", "custom_auth", "anonymous", "created_at", "last_login_at",
        "tokens_valid_after", "valid_since", "credential_version",
    ]

    /// Inserts phone second factors (an admin's or an import's: TOTP factors are only enrolled by
    /// their owner), in one statement.
    func insertPhoneFactors(_ factors: [(localID: String, factor: MFAFactor)]) async throws {
        guard !factors.isEmpty else { return }
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        let rows = factors.map { localID, factor in
            JSONValue.object([
                "local_id": .string(localID), "enrollment_id": .string(factor.enrollmentID), "display_name": text(factor.displayName),
                "phone_number": text(factor.phoneNumber), "enrolled_at": .double(factor.enrolledAt.timeIntervalSince1970),
                "enrolled_at_text": text(factor.enrolledAtText),
            ])
        }
        try await query(
            """
            INSERT INTO mfa_factors (tenant_id, local_id, enrollment_id, kind, display_name, phone_number, enrolled_at, enrolled_at_text)
            SELECT \(tenant), m.local_id, m.enrollment_id, 'PHONE', m.display_name, m.phone_number, to_timestamp(m.enrolled_at),
                m.enrolled_at_text
            FROM json_to_recordset(\(JSONValue.array(rows).serialized())::json)
                AS m(local_id text, enrollment_id text, display_name text, phone_number text, enrolled_at float8, enrolled_at_text text)
            """)
    }

    /// Replaces a locked user's factors by an admin's set (§B.13): every phone factor rewritten,
    /// TOTP factors kept (secret and step) when listed, else removed.
    func replaceFactors(_ factors: [MFAFactor], of localID: String) async throws {
        let keptTOTP = factors.filter { $0.kind == .totp }
        try await query(
            """
            DELETE FROM mfa_factors WHERE tenant_id = \(tenant) AND local_id = \(localID)
                AND (kind = 'PHONE' OR enrollment_id <> ALL(\(keptTOTP.map(\.enrollmentID))))
            """)
        for factor in keptTOTP {
            try await query(
                """
                UPDATE mfa_factors SET display_name = \(factor.displayName), enrolled_at = \(factor.enrolledAt),
                    enrolled_at_text = \(factor.enrolledAtText)
                WHERE tenant_id = \(tenant) AND local_id = \(localID) AND enrollment_id = \(factor.enrollmentID)
                """)
        }
        try await insertPhoneFactors(factors.filter { $0.kind == .phone }.map { (localID, $0) })
    }

    /// Writes an account's fields as a Core rule decided them, in one statement; the password,
    /// the links and the revocation instants are written by their own steps.
    func writeUser(_ user: UserRecord) async throws {
        for try await _ in try await execute(Prepared.UserWrite(tenant: tenant, user: user)) {}
    }
}
