package import AccountCore
import Foundation
package import Logging
import PostgresNIO

/// The accounts and sessions port over PostgreSQL. Every write is one transaction that locks the
/// user row first where it knows the user (so writers serialise per user), then the session rows;
/// revocations are announced with `pg_notify` in the same transaction so every replica's cache
/// drops them when they commit. A transaction that finds its user through another row (email-link
/// completion locks the code first) can deadlock with one that holds the user (deletion);
/// PostgreSQL aborts one of them, and ``PostgresStore/translating(_:)`` runs that one again.
package struct PostgresAccountStore: AccountStore, PostgresBacked {
    let base: PostgresStore

    /// The notification channel that carries revocations: `u:<localId>` or `s:<sessionId>`.
    package static let revocationChannel = "accountd_revocation"

    /// Creates the store over a running database.
    package init(
        database: ConnectionPool, logger: Logger, revocations: RevocationCache? = nil, tenant: String = "", telemetry: Telemetry = .off
    ) {
        base = PostgresStore(database: database, logger: logger, tenant: tenant, revocations: revocations, telemetry: telemetry)
    }
}
