/// The shape of a replica's connection pool (``ConnectionPool``).
///
/// The defaults keep the pool warm: every connection is opened at start and kept, so connection
/// set-up stays off the request path and a lease is one lock; idle connections are not pinged.
package struct PoolSettings: Sendable, Equatable {
    /// Most connections open at once (`ACCOUNTD_DB_MAX_CONNECTIONS`, default 20).
    package var maximumConnections: Int
    /// Connections kept open even when idle (`ACCOUNTD_DB_MIN_CONNECTIONS`, default the maximum).
    package var minimumConnections: Int
    /// Seconds between keep-alive queries on an idle connection; `nil` sends none
    /// (`ACCOUNTD_DB_KEEPALIVE_SECONDS`, default 0 = none). For a NAT or firewall between accountd
    /// and PostgreSQL that drops idle connections.
    package var keepAliveSeconds: Int64?
    /// The longest a lease waits for a connection outside a request (a request waits until its
    /// own deadline, `ACCOUNTD_REQUEST_DEADLINE_SECONDS`), in seconds.
    package var waitSeconds: Int64
    /// The longest a connection attempt may take, in seconds.
    package var connectTimeoutSeconds: Int64
    /// The longest any statement waits for a row or table lock before it fails with 55P03, which
    /// the store answers as 503 "busy, retry" (`ACCOUNTD_DB_LOCK_TIMEOUT_SECONDS`, default 5;
    /// `nil` waits for ever). Set on every connection at start-up, so no request holds a pooled
    /// connection indefinitely behind another transaction's lock. Migrations lift it for their
    /// own session (``Migrator``).
    package var lockTimeoutSeconds: Int64?
    /// The longest any statement runs before PostgreSQL cancels it (57014, answered 503)
    /// (`ACCOUNTD_DB_STATEMENT_TIMEOUT_SECONDS`, default 10; `nil` for none). Migrations lift it.
    package var statementTimeoutSeconds: Int64?
    /// Whether the hot statements are named, prepared once per connection
    /// (`ACCOUNTD_DB_PREPARED_STATEMENTS`, default on). Off, each is sent unnamed and planned on
    /// every run: for a pooler in transaction mode (PgBouncer before 1.21, or without
    /// `max_prepared_statements`), which hands each transaction a different server connection
    /// that never saw the statement prepared.
    package var preparedStatements: Bool = true

    package init(
        maximumConnections: Int = 20, minimumConnections: Int? = nil, keepAliveSeconds: Int64? = nil, waitSeconds: Int64 = 5,
        connectTimeoutSeconds: Int64 = 5,
        lockTimeoutSeconds: Int64? = 5, statementTimeoutSeconds: Int64? = 10
    ) {
        self.maximumConnections = maximumConnections
        self.minimumConnections = min(minimumConnections ?? maximumConnections, maximumConnections)
        self.keepAliveSeconds = keepAliveSeconds
        self.waitSeconds = waitSeconds
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.lockTimeoutSeconds = lockTimeoutSeconds
        self.statementTimeoutSeconds = statementTimeoutSeconds
    }

    /// A small pool opened on demand, for short-lived tools (`accountd migrate`, test set-up).
    package static func onDemand(_ maximumConnections: Int) -> PoolSettings {
        PoolSettings(maximumConnections: maximumConnections, minimumConnections: 0, waitSeconds: 30)
    }
}
