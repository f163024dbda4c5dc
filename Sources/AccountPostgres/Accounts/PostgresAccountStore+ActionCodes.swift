public import AccountCore
import Crypto
public import Foundation
import Logging
import PostgresNIO

extension PostgresAccountStore: ActionCodeStore {
    /// SHA-256 of a code: what the table keys on.
    static func hash(_ code: String) -> Data {
        Data(SHA256.hash(data: Data(code.utf8)))
    }

    package func store(_ code: OutgoingCode, precondition: IssuePrecondition?) async throws {
        try await translating {
            try await database.withTransaction(logger: logger) { connection in
                if let precondition {
                    guard let user = try await Self.user(localID: precondition.localID, on: connection, logger: logger, lock: true) else {
                        throw AccountError(.userNotFound)
                    }
                    if let session = precondition.session { try await Self.check(session, user: user, on: connection, logger: logger) }
                    guard user.credentialVersion == precondition.credentialVersion, user.email == precondition.email else {
                        throw AccountError(.unavailable, "The account changed while the code was made; retry.")
                    }
                }
                try await Self.insert(code, on: connection, logger: logger)
            }
        }
    }

    package func code(_ code: String) async throws -> ActionCodeRecord? {
        try await translating {
            try await database.withConnection { connection in
                try await Self.code(code, on: connection, logger: logger, lock: false)
            }
        }
    }

    package func apply(_ code: String, recover: OutgoingCode?, now: Date) async throws -> UserRecord {
        try await translating {
            try await database.withTransaction(logger: logger) { connection in
                guard let record = try await Self.spend(code, now: now, on: connection, logger: logger) else {
                    throw AccountError(.invalidOOBCode)
                }
                try record.requireUsable(kinds: [.verifyEmail, .verifyAndChangeEmail, .recoverEmail], now: now)
                guard let localID = record.localID,
                    let user = try await Self.user(localID: localID, on: connection, logger: logger, lock: true)
                else { throw AccountError(.emailNotFound) }
                if user.disabled { throw AccountError(.userDisabled) }
                guard user.email == record.email else { throw AccountError(.invalidOOBCode) }
                switch record.kind {
                case .verifyEmail:
                    try await connection.query(
                        "UPDATE users SET email_verified = true WHERE tenant_id = '' AND local_id = \(localID)", logger: logger
                    )
                case .verifyAndChangeEmail, .recoverEmail:
                    guard let target = record.newEmail else { throw AccountError(.invalidOOBCode) }
                    if let owner = try await Self.localID(ofEmail: target, on: connection, logger: logger), owner != localID {
                        throw AccountError(.emailExists)
                    }
                    // A change proves the new mailbox; a recovery gives back the old address as it
                    // was, so an unproven address stays unproven (and the stripping rule still
                    // applies to whoever proves it later).
                    let verified = record.kind == .verifyAndChangeEmail || record.restoreEmailVerified
                    try await connection.query(
                        """
                        UPDATE users SET email = \(target), email_verified = \(verified), email_link_signin = false,
                            initial_email = coalesce(initial_email, email)
                        WHERE tenant_id = '' AND local_id = \(localID)
                        """,
                        logger: logger
                    )
                    _ = try await Self.revokeAll(user: user, reason: .emailChanged, now: now, on: connection, logger: logger)
                    if record.kind == .verifyAndChangeEmail, let recover {
                        try await Self.insert(recover, restoreEmailVerified: user.emailVerified, on: connection, logger: logger)
                    }
                default:
                    throw AccountError(.invalidOOBCode)
                }
                return try await Self.user(localID: localID, on: connection, logger: logger, lock: false)!
            }
        }
    }

    package func resetPassword(_ code: String, password: StoredPassword, now: Date) async throws -> UserRecord {
        try await translating {
            try await database.withTransaction(logger: logger) { connection in
                guard let record = try await Self.code(code, on: connection, logger: logger, lock: true) else {
                    throw AccountError(.invalidOOBCode)
                }
                try record.requireUsable(kinds: [.passwordReset], now: now)
                guard let localID = record.localID,
                    let user = try await Self.user(localID: localID, on: connection, logger: logger, lock: true)
                else { throw AccountError(.emailNotFound) }
                guard user.email == record.email else { throw AccountError(.invalidOOBCode) }
                if user.disabled { throw AccountError(.userDisabled) }
                if let plan = TakeoverRules.plan(for: user, proof: .passwordReset) {
                    try await Self.strip(plan, from: user, now: now, on: connection, logger: logger)
                }
                try await Self.writePassword(password, localID: localID, now: now, on: connection, logger: logger)
                try await connection.query(
                    """
                    UPDATE users SET email_verified = true, credential_version = credential_version + 1
                    WHERE tenant_id = '' AND local_id = \(localID)
                    """,
                    logger: logger
                )
                try await connection.query(
                    """
                    UPDATE action_codes SET used_at = \(now), used_reason = 'PASSWORD_RESET'
                    WHERE tenant_id = '' AND local_id = \(localID) AND kind = 'PASSWORD_RESET' AND used_at IS NULL
                    """,
                    logger: logger
                )
                let current = try await Self.user(localID: localID, on: connection, logger: logger, lock: false)!
                _ = try await Self.revokeAll(user: current, reason: .passwordReset, now: now, on: connection, logger: logger)
                return try await Self.user(localID: localID, on: connection, logger: logger, lock: false)!
            }
        }
    }

    package func completeEmailLink(_ completion: EmailLinkCompletion) async throws -> (UserRecord, MintTicket, isNewUser: Bool) {
        try await translating {
            try await database.withTransaction(logger: logger) { connection in
                let now = completion.now
                guard let record = try await Self.spend(completion.code, now: now, on: connection, logger: logger) else {
                    throw AccountError(.invalidOOBCode)
                }
                try record.requireUsable(kinds: [.emailSignIn], now: now)
                guard record.email == completion.email else {
                    throw AccountError(.invalidEmail, "The email provided does not match the sign-in email address.")
                }
                var isNewUser = false
                var localID: String
                // The user as written, when it can be known without reading it back.
                var written: UserRecord?
                if let (linkID, guardSession) = completion.linkTo {
                    // Link: the caller proves the session and the mailbox; nothing is stripped.
                    if let owner = try await Self.localID(ofEmail: completion.email, on: connection, logger: logger), owner != linkID {
                        throw AccountError(.emailExists)
                    }
                    guard let user = try await Self.user(localID: linkID, on: connection, logger: logger, lock: true) else {
                        throw AccountError(.userNotFound)
                    }
                    try await Self.check(guardSession, user: user, on: connection, logger: logger)
                    if user.disabled { throw AccountError(.userDisabled) }
                    localID = linkID
                    try await connection.query(
                        """
                        UPDATE users SET email = \(completion.email), email_verified = true, email_link_signin = true,
                            last_login_at = \(now), initial_email = CASE WHEN email IS NOT NULL AND email <> \(completion.email)
                                                 THEN coalesce(initial_email, email) ELSE initial_email END
                        WHERE tenant_id = '' AND local_id = \(linkID)
                        """,
                        logger: logger
                    )
                    if let old = user.email, old != completion.email {
                        _ = try await Self.revokeAll(user: user, reason: .emailChanged, now: now, on: connection, logger: logger)
                        if let recover = completion.recover {
                            try await Self.insert(recover, restoreEmailVerified: user.emailVerified, on: connection, logger: logger)
                        }
                    }
                } else if var user = try await Self.user(email: completion.email, on: connection, logger: logger, lock: true) {
                    if user.disabled { throw AccountError(.userDisabled) }
                    localID = user.localID
                    if let plan = TakeoverRules.plan(for: user, proof: .emailLink) {
                        try await Self.strip(plan, from: user, now: now, on: connection, logger: logger)
                    }
                    var binds = PostgresBindings()
                    binds.append(now)
                    binds.append(localID)
                    _ = try await connection.execute(Prepared.EmailLinkLogin(binds: binds), logger: logger)
                    if user.emailVerified {
                        // The common case, a verified account: only the two columns above changed.
                        user.emailLinkSignin = true
                        user.lastLoginAt = now
                        written = user
                    }
                } else {
                    localID = completion.newLocalID
                    isNewUser = true
                    try await connection.query(
                        """
                        INSERT INTO users (local_id, email, email_verified, email_link_signin, created_at, last_login_at, tokens_valid_after,
                            valid_since)
                        VALUES (\(localID), \(completion.email), true, true, \(now), \(now), \(now), \(RevocationRules.seconds(now)))
                        """,
                        logger: logger
                    )
                }
                if written == nil { written = try await Self.user(localID: localID, on: connection, logger: logger, lock: false) }
                guard let user = written else { throw AccountError(.unavailable) }
                let ticket = try await Self.insertSession(completion.session, user: user, now: now, on: connection, logger: logger)
                return (user, ticket, isNewUser)
            }
        }
    }

    // MARK: Steps

    /// Carries out THE RULE's plan (``TakeoverRules``) on `user`, in the caller's transaction.
    static func strip(_ plan: StripPlan, from user: UserRecord, now: Date, on connection: DatabaseConnection, logger: Logger)
        async throws
    {
        let localID = user.localID
        if plan.removePassword {
            try await connection.query("DELETE FROM password_credentials WHERE tenant_id = '' AND local_id = \(localID)", logger: logger)
        }
        try await connection.query("DELETE FROM federated_identities WHERE tenant_id = '' AND local_id = \(localID)", logger: logger)
        try await connection.query(
            """
            UPDATE users SET phone_number = NULL, credential_version = credential_version + 1
            WHERE tenant_id = '' AND local_id = \(localID)
            """,
            logger: logger
        )
        try await connection.query(
            """
            UPDATE action_codes SET used_at = \(now), used_reason = 'EMAIL_LINK_TAKEOVER_PROTECTION'
            WHERE tenant_id = '' AND local_id = \(localID) AND used_at IS NULL AND kind <> ALL(\(StripPlan.keptCodeKinds.map(\.rawValue)))
            """,
            logger: logger
        )
        _ = try await revokeAll(user: user, reason: plan.revokeReason, now: now, on: connection, logger: logger)
    }

    /// Writes a code (and queues its email). An earlier unspent code of the same kind for the same
    /// user is retired first, as Firebase answers it `INVALID_OOB_CODE` once a newer one was sent;
    /// sign-in codes for an address with no account yet belong to no user and are all kept (the
    /// first completion creates the account, reference §7 item 37). `restoreEmailVerified` is, for a
    /// recover code, whether the address it restores was verified before the change. A code being
    /// spent right now (its row locked, then the user's: the other lock order) is skipped rather
    /// than waited for, so issuing and spending never deadlock; it is being used up anyway.
    static func insert(
        _ outgoing: OutgoingCode, restoreEmailVerified: Bool? = nil, on connection: DatabaseConnection, logger: Logger
    ) async throws {
        let code = outgoing.code
        if let localID = code.localID {
            try await connection.query(
                """
                UPDATE action_codes SET used_at = \(code.createdAt), used_reason = 'SUPERSEDED'
                WHERE code_hash IN (
                    SELECT code_hash FROM action_codes
                    WHERE tenant_id = '' AND local_id = \(localID) AND kind = \(code.kind.rawValue) AND used_at IS NULL
                    FOR UPDATE SKIP LOCKED)
                """,
                logger: logger
            )
        }
        try await connection.query(
            """
            INSERT INTO action_codes (code_hash, kind, local_id, email, new_email, settings, lang, created_at, expires_at,
                restore_email_verified)
            VALUES (\(hash(code.code)), \(code.kind.rawValue), \(code.localID), \(code.email), \(code.newEmail),
                \(code.settingsJSON)::jsonb, \(code.lang), \(code.createdAt), \(code.expiresAt), \(restoreEmailVerified))
            """,
            logger: logger
        )
        if let email = outgoing.email {
            try await PostgresOutbox.enqueue(email, on: connection, logger: logger)
        }
    }

    static func code(_ code: String, on connection: DatabaseConnection, logger: Logger, lock: Bool) async throws -> ActionCodeRecord? {
        var binds = PostgresBindings()
        try binds.append(hash(code))
        let rows =
            lock
            ? try await connection.execute(Prepared.ActionCodeForUpdate(binds: binds), logger: logger)
            : try await connection.execute(Prepared.ActionCode(binds: binds), logger: logger)
        return try await decodeCode(rows)
    }

    /// Spends `code` in the caller's transaction and returns it as it was before, in one round
    /// trip where the code was unspent; a spent or unknown code is read as it is (nil: unknown).
    /// The caller's checks come after, and a refusal rolls the spending back with the transaction.
    static func spend(_ code: String, now: Date, on connection: DatabaseConnection, logger: Logger) async throws -> ActionCodeRecord? {
        var binds = PostgresBindings()
        binds.append(now)
        try binds.append(hash(code))
        if let unspent = try await decodeCode(try await connection.execute(Prepared.ActionCodeSpend(binds: binds), logger: logger)) {
            return unspent
        }
        return try await Self.code(code, on: connection, logger: logger, lock: false)
    }

    /// The first row of ``Prepared/ActionCode``'s columns.
    private static func decodeCode(_ rows: some AsyncSequence<PostgresRow, any Error>) async throws -> ActionCodeRecord? {
        for try await row in rows {
            let (kind, localID, email, newEmail, lang, expiresAt, usedAt, restoreVerified) = try row.decode(
                (String, String?, String, String?, String, Date, Date?, Bool?).self)
            guard let kind = ActionCodeKind(rawValue: kind) else { return nil }
            return ActionCodeRecord(
                kind: kind, localID: localID, email: email, newEmail: newEmail, lang: lang, expiresAt: expiresAt, usedAt: usedAt,
                restoreEmailVerified: restoreVerified ?? false)
        }
        return nil
    }

    static func localID(ofEmail email: String, on connection: DatabaseConnection, logger: Logger) async throws -> String? {
        for try await row in try await connection.execute(Prepared.LocalIDByEmail(binds: binds(email)), logger: logger) {
            return try row.decode(String.self)
        }
        return nil
    }
}
