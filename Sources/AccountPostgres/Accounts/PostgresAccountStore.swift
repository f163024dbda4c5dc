public import AccountCore
import Foundation
public import Logging
public import PostgresNIO
import Synchronization

/// The accounts and sessions port over PostgreSQL. Every write is one transaction that locks the
/// user row first where it knows the user (so writers serialise per user), then the session rows;
/// revocations are announced with `pg_notify` in the same transaction so every replica's cache
/// drops them when they commit. A transaction that finds its user through another row (email-link
/// completion locks the code first) can deadlock with one that holds the user (deletion);
/// PostgreSQL aborts one of them, and ``translating(_:)`` runs that one again.
package struct PostgresAccountStore: AccountStore {
    let database: Database
    let logger: Logger
    /// This replica's revocation cache: what a call announces (``announce(_:on:logger:)``) is
    /// forgotten here as soon as the call ends, without waiting for the notification's round trip,
    /// so the replica that made a revocation never serves the old state.
    let revocations: RevocationCache?

    /// The notification channel that carries revocations: `u:<localId>` or `s:<sessionId>`.
    package static let revocationChannel = "accountd_revocation"

    /// Creates the store over a running database.
    package init(database: Database, logger: Logger, revocations: RevocationCache? = nil) {
        self.database = database
        self.logger = logger
        self.revocations = revocations
    }

    /// What changed a token check's answer: a user (revoked, disabled, deleted) or one session.
    enum Revoked: Sendable {
        case user(String)
        case session(String)
    }

    /// The revocations the current store call announced.
    final class Announced: Sendable {
        let revoked = Mutex<[Revoked]>([])
    }

    @TaskLocal static var announced: Announced?

    /// Announces `revoked` to every replica (`pg_notify`, delivered when the transaction commits)
    /// and to this one when the store call ends. Every revocation goes through here.
    static func announce(_ revoked: Revoked, on connection: DatabaseConnection, logger: Logger) async throws {
        let payload: String
        switch revoked {
        case .user(let localID): payload = "u:" + localID
        case .session(let sessionID): payload = "s:" + sessionID
        }
        try await connection.query("SELECT pg_notify(\(revocationChannel), \(payload))", logger: logger)
        announced?.revoked.withLock { $0.append(revoked) }
    }

    /// Forgets in this replica's cache what a call announced, whether it committed or not (a
    /// forgotten entry only costs a read).
    private func forget(_ announced: Announced) {
        guard let revocations else { return }
        for revoked in announced.revoked.withLock({ $0 }) {
            switch revoked {
            case .user(let localID): revocations.invalidate(user: localID)
            case .session(let sessionID): revocations.invalidate(session: sessionID)
            }
        }
    }

    // MARK: Reads

    /// The user row's select list (over `users u`, `password_credentials p`), for ``decodeUser(_:)``.
    static let userSelectList = """
        u.local_id, u.email, u.email_verified, u.email_link_signin, u.initial_email, u.display_name, u.photo_url,
        u.phone_number, u.disabled, u.custom_attributes, u.custom_auth, u.created_at, u.last_login_at, u.last_refresh_at,
        u.valid_since, u.tokens_valid_after, u.credential_version,
        p.algorithm, p.hash, p.salt, p.parameters::text, p.updated_at,
        (SELECT coalesce(json_agg(json_build_array(f.provider_id, f.raw_id, f.email, f.display_name, f.photo_url,
                 (extract(epoch FROM f.linked_at) * 1000)::bigint) ORDER BY f.linked_at), '[]')::text
           FROM federated_identities f WHERE f.tenant_id = u.tenant_id AND f.local_id = u.local_id)
        """

    /// The tables behind ``userSelectList``.
    static let userTables = "users u LEFT JOIN password_credentials p ON p.tenant_id = u.tenant_id AND p.local_id = u.local_id"

    /// The user row's columns and tables: `SELECT \(userColumns) WHERE …`.
    static let userColumns = "\(userSelectList) FROM \(userTables)"

    package func user(localID: String) async throws -> UserRecord? {
        try await translating {
            try await database.withConnection { try await Self.user(localID: localID, on: $0, logger: logger, lock: false) }
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

    package func sessionState(sessionID: String) async throws -> SessionState? {
        try await translating {
            let rows = try await database.execute(Prepared.SessionState(binds: Self.binds(sessionID)), logger: logger)
            for row in rows {
                let (localID, live, exists, disabled, validSince) = try row.decode((String, Bool, Bool, Bool, Int64).self)
                return SessionState(localID: localID, sessionLive: live, userExists: exists, userDisabled: disabled, validSince: validSince)
            }
            return nil
        }
    }

    static let sessionColumns = """
        session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method, user_agent, ip_address,
        last_refresh_at, refresh_generation, generation_issued_at, refresh_salt, refresh_key_id, last_mint_at,
        expires_at, revoked_at, revoke_reason, user_deleted
        """

    package func sessions(localID: String, includeRevoked: Bool, limit: Int, before: SessionCursor?) async throws -> [SessionRecord] {
        try await translating {
            var binds = PostgresBindings()
            binds.append(localID)
            binds.append(includeRevoked)
            binds.append(before?.createdAt ?? Date.distantFuture)
            binds.append(before?.sessionID ?? "")
            binds.append(limit)
            let rows = try await database.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT \(Self.sessionColumns) FROM sessions
                        WHERE tenant_id = '' AND local_id = $1 AND ($2 OR revoked_at IS NULL)
                          AND (created_at, session_id) < ($3, CASE WHEN $4 = '' THEN chr(1114111) ELSE $4 END)
                        ORDER BY created_at DESC, session_id DESC LIMIT $5
                        """,
                    binds: binds
                ),
                logger: logger
            )
            var sessions: [SessionRecord] = []
            for row in rows { sessions.append(try Self.decodeSession(row)) }
            return sessions
        }
    }

    // MARK: Decoding (each entity in one place)

    static func user(localID: String, on connection: DatabaseConnection, logger: Logger, lock: Bool) async throws -> UserRecord? {
        let rows =
            lock
            ? try await connection.execute(Prepared.UserByLocalIDForUpdate(binds: binds(localID)), logger: logger)
            : try await connection.execute(Prepared.UserByLocalID(binds: binds(localID)), logger: logger)
        for try await row in rows { return try decodeUser(row) }
        return nil
    }

    static func user(email: String, on connection: DatabaseConnection, logger: Logger, lock: Bool) async throws -> UserRecord? {
        let rows =
            lock
            ? try await connection.execute(Prepared.UserByEmailForUpdate(binds: binds(email)), logger: logger)
            : try await connection.execute(Prepared.UserByEmail(binds: binds(email)), logger: logger)
        for try await row in rows { return try decodeUser(row) }
        return nil
    }

    static func decodeUser(_ row: PostgresRow) throws -> UserRecord {
        let c = row.makeRandomAccess()
        var user = UserRecord(
            localID: try c[0].decode(String.self),
            email: try c[1].decode(String?.self),
            emailVerified: try c[2].decode(Bool.self),
            emailLinkSignin: try c[3].decode(Bool.self),
            initialEmail: try c[4].decode(String?.self),
            displayName: try c[5].decode(String?.self),
            photoURL: try c[6].decode(String?.self),
            phoneNumber: try c[7].decode(String?.self),
            disabled: try c[8].decode(Bool.self),
            customAttributes: try c[9].decode(String?.self),
            customAuth: try c[10].decode(Bool.self),
            createdAt: try c[11].decode(Date.self),
            lastLoginAt: try c[12].decode(Date?.self),
            lastRefreshAt: try c[13].decode(Date?.self),
            validSince: try c[14].decode(Int64.self),
            tokensValidAfter: try c[15].decode(Date.self),
            credentialVersion: try c[16].decode(Int64.self)
        )
        if let algorithm = try c[17].decode(String?.self) {
            // Every user read (sign-in, refresh, lookup) comes through here: the project's parser, not JSONDecoder.
            let parameters =
                try c[20].decode(String?.self).flatMap { try? JSONValue.parse($0).objectValue }?.compactMapValues(\.stringValue) ?? [:]
            user.password = PasswordCredential(
                stored: StoredPassword(
                    algorithm: algorithm,
                    hash: Array(try c[18].decode(Data.self)),
                    salt: try c[19].decode(Data?.self).map(Array.init),
                    parameters: parameters
                ),
                updatedAt: try c[21].decode(Date.self)
            )
        }
        let links = try c[22].decode(String.self)
        if links != "[]", case .array(let array)? = try? JSONValue.parse(links) {
            user.federated = array.compactMap { element in
                guard case .array(let item) = element, item.count == 6, let provider = item[0].stringValue, let raw = item[1].stringValue
                else { return nil }
                return FederatedIdentity(
                    providerID: provider, rawID: raw, email: item[2].stringValue, displayName: item[3].stringValue,
                    photoURL: item[4].stringValue, linkedAt: Date(timeIntervalSince1970: Double(item[5].intValue ?? 0) / 1000)
                )
            }
        }
        return user
    }

    /// A session from ``sessionColumns``, starting at column `first` (0 unless joined behind other columns).
    static func decodeSession(_ row: PostgresRow, from first: Int = 0) throws -> SessionRecord {
        let c = row.makeRandomAccess()
        return SessionRecord(
            sessionID: try c[first].decode(String.self),
            localID: try c[first + 1].decode(String.self),
            createdAt: try c[first + 2].decode(Date.self),
            authTime: try c[first + 3].decode(Int64.self),
            signInProvider: try c[first + 4].decode(String.self),
            signInMethod: try c[first + 5].decode(String.self),
            userAgent: try c[first + 6].decode(String?.self),
            ipAddress: try c[first + 7].decode(String?.self),
            lastRefreshAt: try c[first + 8].decode(Date?.self),
            generation: try c[first + 9].decode(Int64.self),
            generationIssuedAt: try c[first + 10].decode(Date.self),
            salt: Array(try c[first + 11].decode(Data.self)),
            keyID: try c[first + 12].decode(String.self),
            lastMintAt: try c[first + 13].decode(Date?.self),
            expiresAt: try c[first + 14].decode(Date?.self),
            revokedAt: try c[first + 15].decode(Date?.self),
            revokeReason: try c[first + 16].decode(String?.self).flatMap(RevokeReason.init(rawValue:)),
            userDeleted: try c[first + 17].decode(Bool.self)
        )
    }

    static func binds(_ values: String...) -> PostgresBindings {
        var binds = PostgresBindings()
        for value in values { binds.append(value) }
        return binds
    }

    // MARK: Errors

    /// Runs `body`, translating database errors once, here: unique violations to the domain's
    /// errors, lock and connection trouble to `unavailable` (503, retried by clients).
    ///
    /// Every body is one transaction or one statement, so a deadlock or serialization failure has
    /// rolled all of it back: the body runs again, at most ``conflictAttempts`` times in all, and
    /// the retry sees what the winning transaction committed (a deleted user, a spent code).
    func translating<T>(_ body: () async throws -> T) async throws -> T {
        let announced = Announced()
        defer { forget(announced) }
        return try await Self.$announced.withValue(announced) { try await retrying(body) }
    }

    private func retrying<T>(_ body: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch {
                let cause = Self.cause(of: error)
                if attempt < Self.conflictAttempts, let state = Self.conflictState(cause) {
                    logger.notice("transaction retried after a conflict", metadata: ["sqlstate": "\(state)", "attempt": "\(attempt)"])
                    attempt += 1
                    continue
                }
                throw Self.translate(cause)
            }
        }
    }

    /// How many times a body runs when PostgreSQL keeps choosing it as a deadlock's victim.
    static let conflictAttempts = 3

    /// The error a transaction's closure, COMMIT or BEGIN failed with.
    static func cause(of error: any Error) -> any Error {
        (error as? Database.TransactionError)?.cause ?? error
    }

    /// `40P01` (deadlock) or `40001` (serialization failure), the two states PostgreSQL's manual
    /// says to answer by running the transaction again; nil for anything else.
    static func conflictState(_ error: any Error) -> String? {
        guard let state = (error as? PSQLError)?.serverInfo?[.sqlState], state == "40P01" || state == "40001" else { return nil }
        return state
    }

    static func translate(_ error: any Error) -> any Error {
        if error is AccountError { return error }
        if error is Database.TransactionError {
            let inner = cause(of: error)
            return inner is Database.TransactionError ? inner : translate(inner)
        }
        // No connection within the request's deadline (the database unreachable or saturated), or
        // a request whose client has gone: transient, nothing was written.
        if let unavailable = error as? Database.Unavailable { return AccountError(.unavailable, unavailable.description) }
        if error is CancellationError { return AccountError(.unavailable, "The request was abandoned.") }
        guard let psql = error as? PSQLError else { return error }
        guard let state = psql.serverInfo?[.sqlState] else {
            return AccountError(.unavailable, "The database is unreachable, retry shortly.")
        }
        switch state {
        case "23505":
            switch psql.serverInfo?[.constraintName] {
            case "users_email_key": return AccountError(.emailExists)
            case "users_phone_key": return AccountError(.phoneNumberExists)
            case "users_pkey": return AccountError(.duplicateLocalID)
            default: return error
            }
        case "22021", "22P05", "22P02", "22025":
            // Text PostgreSQL cannot hold (a NUL, bytes invalid in UTF-8, a bad escape): the
            // request's fault, whichever field the validation before missed.
            return AccountError(.invalidArgument, "A field holds characters that cannot be stored.")
        case "55P03", "40P01", "40001", "57014":
            return AccountError(.unavailable, "The account is busy, retry shortly.")
        case "57P01", "57P02", "57P03", "53300", "08000", "08003", "08006":
            // The server shutting down or restarting (a connection killed in COMMIT included), not
            // accepting connections yet, or out of connection slots: transient, as a lock timeout is.
            return AccountError(.unavailable, "The database is unavailable, retry shortly.")
        default:
            return error
        }
    }
}
