public import AccountCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresAccountStore {
    package func createUser(_ user: UserRecord, session: NewSession?, now: Date) async throws -> (UserRecord, MintTicket?) {
        try await translating {
            try await database.withTransaction(logger: logger) { connection in
                try await connection.query(
                    """
                    INSERT INTO users (local_id, email, email_verified, email_link_signin, initial_email, display_name, photo_url,
                        phone_number, disabled, custom_attributes, custom_auth, created_at, last_login_at, tokens_valid_after, valid_since)
                    VALUES (\(user.localID), \(user.email), \(user.emailVerified), \(user.emailLinkSignin), \(user.initialEmail),
                        \(user.displayName), \(user.photoURL), \(user.phoneNumber), \(user.disabled), \(user.customAttributes),
                        \(user.customAuth), \(user.createdAt), \(session == nil ? nil : now), \(user.tokensValidAfter), \(user.validSince))
                    """,
                    logger: logger
                )
                if let credential = user.password {
                    try await Self.writePassword(
                        credential.stored, localID: user.localID, now: credential.updatedAt, on: connection, logger: logger)
                }
                var ticket: MintTicket?
                if let session {
                    ticket = try await Self.insertSession(session, user: user, now: now, on: connection, logger: logger)
                }
                try await Self.audit(
                    "user.create", localID: user.localID, details: ["email": user.email ?? ""], always: false, on: connection,
                    logger: logger
                )
                let created = try await Self.user(localID: user.localID, on: connection, logger: logger, lock: false)!
                return (created, ticket)
            }
        }
    }

    /// Optimistic first, as the refresh is: ``signInWrite(_:as:now:on:logger:)`` applies only if
    /// the user is still enabled with the credential version and `valid_since` the caller read (the
    /// password was verified against that version; the ID token's `iat` is computed from that
    /// `valid_since`). That is 1 round trip instead of 4. The token's other claims come from the
    /// caller's read, as a refresh's come from its unlocked read. When the write finds the user
    /// changed, or an imported hash is being upgraded, the locked transaction decides, names the
    /// refusal, and then runs the same write under the lock.
    package func startSession(
        for read: UserRecord, upgradedPassword: StoredPassword?, session: NewSession, now: Date
    ) async throws -> (UserRecord, MintTicket) {
        try await translating {
            if upgradedPassword == nil,
                let ticket = try await database.withConnection({
                    try RequestScope.checkBeforeWriting()
                    return try await Self.signInWrite(session, as: read, now: now, on: $0, logger: logger)
                })
            {
                var signedIn = read
                signedIn.lastLoginAt = now
                return (signedIn, ticket)
            }
            return try await database.withTransaction(logger: logger) { connection in
                guard let user = try await Self.user(localID: read.localID, on: connection, logger: logger, lock: true) else {
                    throw AccountError(.userNotFound)
                }
                if read.credentialVersion != user.credentialVersion || user.password == nil {
                    throw AccountError(.invalidPassword)
                }
                if user.disabled { throw AccountError(.userDisabled) }
                // The row is locked and only these fields change: no need to read it back.
                var signedIn = user
                if let upgradedPassword, let credential = user.password {
                    // Same credential version: the imported hash is swapped for the native one, not a change.
                    try await Self.writePassword(
                        upgradedPassword, localID: user.localID, now: credential.updatedAt, on: connection, logger: logger)
                    signedIn.password = PasswordCredential(stored: upgradedPassword, updatedAt: credential.updatedAt)
                }
                // What the write re-checks was just checked under the lock, so it applies.
                guard let ticket = try await Self.signInWrite(session, as: user, now: now, on: connection, logger: logger) else {
                    throw AccountError(.unavailable, "the sign-in's write did not apply under the user's lock")
                }
                signedIn.lastLoginAt = now
                return (signedIn, ticket)
            }
        }
    }

    /// ``Prepared/SignInWrite`` for `user` as read: `last_login_at` and the new session, written
    /// only if the user is still enabled with the same `valid_since` and credential version. The
    /// session's first `iat` and `auth_time` when it wrote; nil when it wrote nothing.
    static func signInWrite(_ session: NewSession, as user: UserRecord, now: Date, on connection: DatabaseConnection, logger: Logger)
        async throws -> MintTicket?
    {
        var (binds, ticket) = try sessionBinds(session, localID: user.localID, validSince: user.validSince, now: now)
        binds.append(user.validSince)
        binds.append(user.credentialVersion)
        var applied = false
        for try await _ in try await connection.execute(Prepared.SignInWrite(binds: binds), logger: logger) { applied = true }
        return applied ? ticket : nil
    }

    package func update(
        localID: String, guardSession: SessionGuard?, change: UserChange, replacement: NewSession?, now: Date
    ) async throws -> (UserRecord, MintTicket?, SessionRecord?) {
        try await translating {
            try await database.withTransaction(logger: logger) { connection in
                guard let user = try await Self.user(localID: localID, on: connection, logger: logger, lock: true) else {
                    throw AccountError(.userNotFound)
                }
                if let guardSession { try await Self.check(guardSession, user: user, on: connection, logger: logger) }
                try await Self.apply(change, to: user, now: now, on: connection, logger: logger)
                for notice in change.notices {
                    try await Self.insert(notice, restoreEmailVerified: user.emailVerified, on: connection, logger: logger)
                }
                var current = user
                if let reason = change.revokeReason(for: user) {
                    current.validSince = try await Self.revokeAll(user: user, reason: reason, now: now, on: connection, logger: logger)
                        .validSince
                }
                var ticket: MintTicket?
                if let replacement {
                    ticket = try await Self.insertSession(replacement, user: current, now: now, on: connection, logger: logger)
                }
                if change.changesTokenState {
                    try await Self.announce(.user(localID), on: connection, logger: logger)
                }
                try await Self.audit(
                    "user.update", localID: localID, details: change.summary, always: false, on: connection, logger: logger)
                let updated = try await Self.user(localID: localID, on: connection, logger: logger, lock: false)!
                return (updated, ticket, nil)
            }
        }
    }

    package func delete(localID: String, guardSession: SessionGuard?, now: Date) async throws {
        try await translating {
            try await database.withTransaction(logger: logger) { connection in
                guard let user = try await Self.user(localID: localID, on: connection, logger: logger, lock: true) else {
                    throw AccountError(.userNotFound)
                }
                if let guardSession { try await Self.check(guardSession, user: user, on: connection, logger: logger) }
                try await connection.query(
                    """
                    UPDATE sessions SET revoked_at = coalesce(revoked_at, \(now)),
                        revoke_reason = coalesce(revoke_reason, \(RevokeReason.userDeleted.rawValue)), user_deleted = true
                    WHERE tenant_id = '' AND local_id = \(localID)
                    """,
                    logger: logger
                )
                try await connection.query(
                    "UPDATE action_codes SET used_at = \(now), used_reason = 'USER_DELETED' WHERE tenant_id = '' AND local_id = \(localID) AND used_at IS NULL",
                    logger: logger
                )
                try await connection.query("DELETE FROM users WHERE tenant_id = '' AND local_id = \(localID)", logger: logger)
                try await Self.announce(.user(localID), on: connection, logger: logger)
                try await Self.audit("user.delete", localID: localID, details: ["email": user.email ?? ""], on: connection, logger: logger)
            }
        }
    }

    package func revokeSessions(localID: String, sessionIDs: [String]?, reason: RevokeReason, now: Date) async throws -> (
        revoked: [String], validSince: Int64
    ) {
        try await translating {
            try await database.withTransaction(logger: logger) { connection in
                guard let user = try await Self.user(localID: localID, on: connection, logger: logger, lock: true) else {
                    throw AccountError(.userNotFound)
                }
                guard let sessionIDs else {
                    return try await Self.revokeAll(user: user, reason: reason, now: now, on: connection, logger: logger)
                }
                let owned = try await connection.query(
                    "SELECT session_id FROM sessions WHERE tenant_id = '' AND local_id = \(localID) AND session_id = ANY(\(sessionIDs)) FOR UPDATE",
                    logger: logger
                )
                var ownedIDs = Set<String>()
                for try await id in owned.decode(String.self) { ownedIDs.insert(id) }
                if let foreign = sessionIDs.first(where: { !ownedIDs.contains($0) }) {
                    throw AccountError.sessionNotFound(foreign)
                }
                let rows = try await connection.query(
                    """
                    UPDATE sessions SET revoked_at = \(now), revoke_reason = \(reason.rawValue)
                    WHERE session_id = ANY(\(sessionIDs)) AND revoked_at IS NULL RETURNING session_id
                    """,
                    logger: logger
                )
                var revoked: [String] = []
                for try await id in rows.decode(String.self) { revoked.append(id) }
                for id in revoked { try await Self.announce(.session(id), on: connection, logger: logger) }
                try await Self.audit(
                    "sessions.revoke", localID: localID,
                    details: ["reason": reason.rawValue, "sessions": revoked.sorted().joined(separator: ",")],
                    on: connection, logger: logger
                )
                return (revoked.sorted(), user.validSince)
            }
        }
    }

    // MARK: Steps shared by the transactions (the connection is inside one)

    /// Inserts a session and records its first mint: `iat` = max(now's second, V), `auth_time` = iat.
    static func insertSession(_ session: NewSession, user: UserRecord, now: Date, on connection: DatabaseConnection, logger: Logger)
        async throws
        -> MintTicket
    {
        let (binds, ticket) = try sessionBinds(session, localID: user.localID, validSince: user.validSince, now: now)
        _ = try await connection.execute(Prepared.SessionInsert(binds: binds), logger: logger)
        return ticket
    }

    /// The binds of ``Prepared/SessionInsert`` (`$1`–`$11`, which ``Prepared/SignInWrite`` shares)
    /// and the `iat` and `auth_time` of the session's first ID token.
    static func sessionBinds(_ session: NewSession, localID: String, validSince: Int64, now: Date) throws -> (PostgresBindings, MintTicket)
    {
        let (issuedAt, mintAt) = RevocationRules.mint(now: now, validSince: validSince)
        var binds = PostgresBindings()
        binds.append(session.sessionID)
        binds.append(localID)
        binds.append(now)
        binds.append(issuedAt)
        binds.append(session.signInProvider)
        binds.append(session.signInMethod)
        binds.append(session.userAgent)
        binds.append(session.ipAddress)
        try binds.append(Data(session.salt))
        binds.append(session.keyID)
        binds.append(mintAt)
        return (binds, MintTicket(issuedAt: issuedAt, authTime: issuedAt))
    }

    /// Reference §3.2 step 5 under the user's row lock: the caller's session is live and its token
    /// not older than V.
    static func check(_ guardSession: SessionGuard, user: UserRecord, on connection: DatabaseConnection, logger: Logger) async throws {
        let rows = try await connection.query(
            """
            SELECT revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) AND NOT user_deleted
            FROM sessions WHERE session_id = \(guardSession.sessionID) AND local_id = \(user.localID)
            """,
            logger: logger
        )
        var live = false
        for try await value in rows.decode(Bool.self) { live = value }
        guard live, guardSession.issuedAt >= user.validSince else { throw AccountError(.tokenExpired) }
    }

    /// Revokes every live session of a locked user and moves V (reference §3.5 item 2).
    static func revokeAll(user: UserRecord, reason: RevokeReason, now: Date, on connection: DatabaseConnection, logger: Logger) async throws
        -> (revoked: [String], validSince: Int64)
    {
        var lastMint: Date?
        for try await value in try await connection.query(
            "SELECT max(last_mint_at) FROM sessions WHERE tenant_id = '' AND local_id = \(user.localID)", logger: logger
        ).decode(Date?.self) {
            lastMint = value
        }
        let validSince = RevocationRules.validSince(revokedAt: now, lastMint: lastMint, previous: user.validSince)
        try await connection.query(
            "UPDATE users SET tokens_valid_after = \(now), valid_since = \(validSince) WHERE tenant_id = '' AND local_id = \(user.localID)",
            logger: logger
        )
        let rows = try await connection.query(
            """
            UPDATE sessions SET revoked_at = \(now), revoke_reason = \(reason.rawValue)
            WHERE tenant_id = '' AND local_id = \(user.localID) AND revoked_at IS NULL RETURNING session_id
            """,
            logger: logger
        )
        var revoked: [String] = []
        for try await id in rows.decode(String.self) { revoked.append(id) }
        try await announce(.user(user.localID), on: connection, logger: logger)
        try await audit(
            "sessions.revoke_all", localID: user.localID,
            details: ["reason": reason.rawValue, "revoked": String(revoked.count), "validSince": String(validSince)],
            on: connection, logger: logger
        )
        return (revoked.sorted(), validSince)
    }

    /// Writes an `audit_events` row in the current transaction. Revocations are always recorded;
    /// other changes when an admin made them (`always: false`).
    static func audit(
        _ action: String, localID: String?, details: [String: String] = [:], always: Bool = true, actor: AuditActor? = nil,
        on connection: DatabaseConnection, logger: Logger
    ) async throws {
        let who = actor ?? AuditContext.actor ?? localID.map(AuditActor.user) ?? .system
        guard always || { if case .admin = who { return true } else { return false } }() else { return }
        let json = String(decoding: try JSONEncoder().encode(details), as: UTF8.self)
        try await connection.query(
            """
            INSERT INTO audit_events (actor_type, actor, action, local_id, details)
            VALUES (\(who.type), \(who.name), \(action), \(localID), \(json)::jsonb)
            """,
            logger: logger
        )
    }

    /// Imported hash parameters as the `parameters` jsonb column stores them; ``decodeUser(_:)``
    /// reads them back.
    static func parametersJSON(_ parameters: [String: String]) -> String {
        JSONValue.object(parameters.mapValues(JSONValue.string)).serialized()
    }

    static func writePassword(_ stored: StoredPassword, localID: String, now: Date, on connection: DatabaseConnection, logger: Logger)
        async throws
    {
        let parameters = parametersJSON(stored.parameters)
        try await connection.query(
            """
            INSERT INTO password_credentials (local_id, algorithm, hash, salt, parameters, updated_at)
            VALUES (\(localID), \(stored.algorithm), \(Data(stored.hash)), \(stored.salt.map { Data($0) }), \(parameters)::jsonb, \(now))
            ON CONFLICT (tenant_id, local_id) DO UPDATE SET algorithm = EXCLUDED.algorithm, hash = EXCLUDED.hash,
                salt = EXCLUDED.salt, parameters = EXCLUDED.parameters, updated_at = EXCLUDED.updated_at
            """,
            logger: logger
        )
    }

    /// Writes the fields of a change (reference §4.7 effects); revocation is the caller's.
    static func apply(_ change: UserChange, to user: UserRecord, now: Date, on connection: DatabaseConnection, logger: Logger) async throws
    {
        let localID = user.localID
        func set(_ column: String, _ value: FieldChange<String>) async throws {
            switch value {
            case .keep: return
            case .set(let text):
                var binds = PostgresBindings()
                binds.append(text)
                binds.append(localID)
                try await connection.query(
                    PostgresQuery(unsafeSQL: "UPDATE users SET \(column) = $1 WHERE tenant_id = '' AND local_id = $2", binds: binds),
                    logger: logger
                )
            case .clear:
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "UPDATE users SET \(column) = NULL WHERE tenant_id = '' AND local_id = $1", binds: binds(localID)),
                    logger: logger
                )
            }
        }
        try await set("display_name", change.displayName)
        try await set("photo_url", change.photoURL)
        try await set("phone_number", change.phoneNumber)
        try await set("custom_attributes", change.customAttributes)
        if case .set(let email) = change.email {
            try await connection.query(
                """
                UPDATE users SET email = \(email), email_verified = \(change.emailVerified ?? false), email_link_signin = false,
                    initial_email = coalesce(initial_email, email)
                WHERE tenant_id = '' AND local_id = \(localID)
                """,
                logger: logger
            )
        } else if case .clear = change.email {
            try await connection.query(
                "UPDATE users SET email = NULL, email_verified = false, email_link_signin = false WHERE tenant_id = '' AND local_id = \(localID)",
                logger: logger
            )
        } else if let verified = change.emailVerified {
            try await connection.query(
                "UPDATE users SET email_verified = \(verified) WHERE tenant_id = '' AND local_id = \(localID)", logger: logger
            )
        }
        if let password = change.password {
            try await writePassword(password, localID: localID, now: now, on: connection, logger: logger)
            try await connection.query(
                "UPDATE users SET credential_version = credential_version + 1 WHERE tenant_id = '' AND local_id = \(localID)",
                logger: logger
            )
            try await connection.query(
                """
                UPDATE action_codes SET used_at = \(now), used_reason = 'PASSWORD_CHANGED'
                WHERE tenant_id = '' AND local_id = \(localID) AND kind = 'PASSWORD_RESET' AND used_at IS NULL
                """,
                logger: logger
            )
        }
        for provider in change.deleteProviders {
            switch provider {
            case "password":
                try await connection.query(
                    "DELETE FROM password_credentials WHERE tenant_id = '' AND local_id = \(localID)", logger: logger
                )
                try await connection.query(
                    """
                    UPDATE users SET email_link_signin = false, credential_version = credential_version + 1
                    WHERE tenant_id = '' AND local_id = \(localID)
                    """,
                    logger: logger
                )
            case "phone":
                try await connection.query(
                    "UPDATE users SET phone_number = NULL WHERE tenant_id = '' AND local_id = \(localID)", logger: logger
                )
            default:
                try await connection.query(
                    "DELETE FROM federated_identities WHERE tenant_id = '' AND local_id = \(localID) AND provider_id = \(provider)",
                    logger: logger
                )
            }
        }
        if let disabled = change.disabled {
            try await connection.query(
                "UPDATE users SET disabled = \(disabled) WHERE tenant_id = '' AND local_id = \(localID)", logger: logger)
        }
        if let createdAt = change.createdAt {
            try await connection.query(
                "UPDATE users SET created_at = \(createdAt) WHERE tenant_id = '' AND local_id = \(localID)", logger: logger)
        }
        if let lastLoginAt = change.lastLoginAt {
            try await connection.query(
                "UPDATE users SET last_login_at = \(lastLoginAt) WHERE tenant_id = '' AND local_id = \(localID)", logger: logger
            )
        }
    }
}
