import AccountCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// What every PostgreSQL store is built on: the pool, the logger, the tenant its statements are
/// bound to, this replica's revocation cache; and the one way a store call runs
/// (``translating(_:)``, ``transaction(_:)``, ``onConnection(_:)``): conflicts run again,
/// database errors translated once into the domain's, revocations forgotten here when it ends.
struct PostgresStore: Sendable {
    let database: ConnectionPool
    let logger: Logger
    /// The tenant every statement is bound to: `''`, the project's default tenant (Identity
    /// Platform's tenants are not served yet; the schema and the statements are ready for them).
    let tenant: String
    /// This replica's revocation cache: what a call announces (``StoreTransaction/announce(_:)``)
    /// is forgotten here as soon as the call ends, without waiting for the notification's round
    /// trip, so the replica that made a revocation never serves the old state.
    let revocations: RevocationCache?
    /// Where committed changes are counted (sessions started and revoked, accounts created).
    let telemetry: Telemetry

    init(
        database: ConnectionPool, logger: Logger, tenant: String = "", revocations: RevocationCache? = nil, telemetry: Telemetry = .off
    ) {
        self.telemetry = telemetry
        self.database = database
        self.logger = logger
        self.tenant = tenant
        self.revocations = revocations
    }

    /// What changed a token check's answer: a user (revoked, disabled, deleted) or one session.
    enum Revoked: Sendable {
        case user(String)
        case session(String)
    }

    /// The revocations the current store call announced, and the figures it will count once it
    /// has committed (``StoreTransaction/count(_:_:by:)``).
    final class Announced: Sendable {
        let revoked = Mutex<[Revoked]>([])
        let counts = Mutex<[(MetricFamily, [String], Int)]>([])
    }

    @TaskLocal static var announced: Announced?

    /// Forgets in this replica's cache what a call announced, whether it committed or not (a
    /// forgotten entry only costs a read).
    func forget(_ announced: Announced) {
        guard let revocations else { return }
        for revoked in announced.revoked.withLock({ $0 }) {
            switch revoked {
            case .user(let localID): revocations.invalidate(user: localID)
            case .session(let sessionID): revocations.invalidate(session: sessionID)
            }
        }
    }

    // MARK: Errors

    /// Runs `body`, translating database errors once, here: unique violations to the domain's
    /// errors, lock and connection trouble to `unavailable` (503, retried by clients).
    ///
    /// Every body is one transaction or one statement, so a deadlock or serialization failure has
    /// rolled all of it back: the body runs again, at most ``conflictAttempts`` times in all, and
    /// the retry sees what the winning transaction committed (a deleted user, a spent code).
    @discardableResult
    func translating<T>(_ body: () async throws -> T) async throws -> T {
        let announced = Announced()
        defer { forget(announced) }
        let result = try await Self.$announced.withValue(announced) { try await retrying(body) }
        if !telemetry.isOff {
            for (family, labels, amount) in announced.counts.withLock({ $0 }) { telemetry.count(family, labels, by: amount) }
        }
        return result
    }

    private func retrying<T>(_ body: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch {
                let cause = Self.cause(of: error)
                if attempt < Self.conflictAttempts, let state = Self.conflictState(cause) {
                    // The attempt rolled back: what it would have counted did not happen.
                    Self.announced?.counts.withLock { $0.removeAll() }
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
        (error as? ConnectionPool.TransactionError)?.cause ?? error
    }

    /// `40P01` (deadlock) or `40001` (serialization failure), the two states PostgreSQL's manual
    /// says to answer by running the transaction again; nil for anything else.
    static func conflictState(_ error: any Error) -> String? {
        guard let state = (error as? PSQLError)?.serverInfo?[.sqlState], state == "40P01" || state == "40001" else { return nil }
        return state
    }

    static func translate(_ error: any Error) -> any Error {
        if error is AccountError { return error }
        if error is ConnectionPool.TransactionError {
            let inner = cause(of: error)
            return inner is ConnectionPool.TransactionError ? inner : translate(inner)
        }
        // No connection within the request's deadline (the database unreachable or saturated), or
        // a request whose client has gone: transient, nothing was written.
        if let unavailable = error as? ConnectionPool.Unavailable { return AccountError(.unavailable, unavailable.description) }
        if error is CancellationError { return AccountError(.unavailable, "The request was abandoned.") }
        guard let psql = error as? PSQLError else { return error }
        guard let state = psql.serverInfo?[.sqlState] else {
            return AccountError(.unavailable, "The database is unreachable, retry shortly.")
        }
        switch state {
        case "25006":
            // A write reached a server that is read-only now: a primary demoted by a failover.
            return AccountError(.unavailable, ConnectionPool.Unavailable.readOnly.description)
        case "23505":
            switch psql.serverInfo?[.constraintName] {
            case "users_email_key": return AccountError(.emailExists)
            case "users_phone_key": return AccountError(.phoneNumberExists)
            case "users_pkey": return AccountError(.duplicateLocalID)
            case "federated_identities_tenant_id_provider_id_raw_id_key": return AccountError(.federatedUserIDAlreadyLinked)
            case "custom_token_signers_fingerprint_key":
                return AccountError(.configurationExists, "This key is already registered for the project.")
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

    // MARK: Running a call

    /// Runs `body` as one transaction: BEGIN, the body, COMMIT (ROLLBACK when it throws), run again
    /// after a deadlock, database errors translated (``translating(_:)``).
    func transaction<T>(_ body: (StoreTransaction) async throws -> T) async throws -> T {
        try await translating { try await inTransaction(body) }
    }

    /// One transaction, inside a call that ``translating(_:)`` already wraps.
    func inTransaction<T>(_ body: (StoreTransaction) async throws -> T) async throws -> T {
        try await database.withTransaction(logger: logger) { connection in
            try await body(StoreTransaction(connection: connection, logger: logger, tenant: tenant))
        }
    }

    /// One connection outside a transaction (a read, or one optimistic statement), inside a call
    /// that ``translating(_:)`` already wraps.
    func onConnection<T>(_ body: (StoreTransaction) async throws -> T) async throws -> T {
        try await database.withConnection { connection in
            try await body(StoreTransaction(connection: connection, logger: logger, tenant: tenant))
        }
    }
}

/// A store over ``PostgresStore``: its pool, logger and tenant, and its way of running a call.
protocol PostgresBacked {
    var base: PostgresStore { get }
}

extension PostgresBacked {
    var database: ConnectionPool { base.database }
    var logger: Logger { base.logger }
    var tenant: String { base.tenant }

    /// ``PostgresStore/translating(_:)``.
    @discardableResult
    func translating<T>(_ body: () async throws -> T) async throws -> T { try await base.translating(body) }

    /// ``PostgresStore/transaction(_:)``.
    func transaction<T>(_ body: (StoreTransaction) async throws -> T) async throws -> T { try await base.transaction(body) }

    /// ``PostgresStore/inTransaction(_:)``.
    func inTransaction<T>(_ body: (StoreTransaction) async throws -> T) async throws -> T { try await base.inTransaction(body) }

    /// ``PostgresStore/onConnection(_:)``.
    func onConnection<T>(_ body: (StoreTransaction) async throws -> T) async throws -> T { try await base.onConnection(body) }
}
