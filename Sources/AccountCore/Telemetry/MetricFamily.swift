/// Every metric family accountd exports (`GET /metrics` on the admin listener), with its type, its
/// labels and its help text: the one vocabulary the emitters, the exposition, the dashboard and
/// the alert rules share. Label values are bounded sets (route names, error codes, providers,
/// reasons, buckets), never a user id, an email, an address, a token or a raw path.
package enum MetricFamily: String, CaseIterable, Sendable {
    // HTTP
    case httpRequests = "accountd_http_requests_total"
    case httpRequestDuration = "accountd_http_request_duration_seconds"
    case httpInFlight = "accountd_http_requests_in_flight"
    case httpTimeouts = "accountd_http_timeouts_total"
    // Accounts and sessions
    case signIns = "accountd_sign_ins_total"
    case signUps = "accountd_sign_ups_total"
    case sessionsCreated = "accountd_sessions_created_total"
    case sessionsRevoked = "accountd_sessions_revoked_total"
    case refreshReuse = "accountd_refresh_token_reuse_total"
    case takeoverProtection = "accountd_takeover_protection_total"
    // The database
    case poolConnections = "accountd_db_pool_connections"
    case poolMaxConnections = "accountd_db_pool_max_connections"
    case poolWaiters = "accountd_db_pool_waiters"
    case poolWait = "accountd_db_pool_wait_seconds"
    case connectFailures = "accountd_db_connect_failures_total"
    case databaseUp = "accountd_db_up"
    case statementDuration = "accountd_db_statement_duration_seconds"
    // Outboxes (mail, SMS)
    case outboxDepth = "accountd_outbox_depth"
    case outboxOldestAge = "accountd_outbox_oldest_age_seconds"
    case outboxAttempts = "accountd_outbox_attempts_total"
    case outboxSends = "accountd_outbox_sends_total"
    // Abuse limits, hashing, caches, listeners, identity providers
    case limitRefusals = "accountd_limit_refusals_total"
    case lockoutsStarted = "accountd_lockouts_started_total"
    case lockoutsCleared = "accountd_lockouts_cleared_total"
    case hashQueueDepth = "accountd_hash_queue_depth"
    case hashQueueRefusals = "accountd_hash_queue_refusals_total"
    case hashQueueWait = "accountd_hash_queue_wait_seconds"
    case tokenCache = "accountd_token_cache_lookups_total"
    case revocationListenerUp = "accountd_revocation_listener_up"
    case revocationLag = "accountd_revocation_notification_lag_seconds"
    case idpKeyFetches = "accountd_idp_key_fetches_total"
    // The process
    case buildInfo = "accountd_build_info"
    case uptime = "accountd_uptime_seconds"
    case residentMemory = "process_resident_memory_bytes"
    case cpuSeconds = "process_cpu_seconds_total"
    case openFDs = "process_open_fds"
    case startTime = "process_start_time_seconds"

    /// The Prometheus type.
    package enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// The Prometheus type of the family.
    package var kind: Kind {
        switch self {
        case .httpRequestDuration, .poolWait, .statementDuration, .hashQueueWait, .revocationLag: .histogram
        case .httpInFlight, .poolConnections, .poolMaxConnections, .poolWaiters, .databaseUp, .outboxDepth, .outboxOldestAge,
            .hashQueueDepth, .revocationListenerUp, .buildInfo, .uptime, .residentMemory, .openFDs, .startTime:
            .gauge
        default: .counter
        }
    }

    /// The label names every series of the family carries.
    package var labels: [String] {
        switch self {
        case .httpRequests: ["listener", "rpc", "status", "code"]
        case .httpRequestDuration: ["listener", "rpc"]
        case .httpInFlight: ["listener"]
        case .httpTimeouts: ["kind"]
        case .signIns: ["provider", "outcome"]
        case .signUps, .sessionsCreated: ["provider"]
        case .sessionsRevoked: ["reason"]
        case .takeoverProtection: ["trigger"]
        case .poolConnections: ["state"]
        case .statementDuration: ["statement"]
        case .outboxDepth, .outboxOldestAge, .outboxAttempts: ["queue"]
        case .outboxSends: ["queue", "transport", "outcome"]
        case .limitRefusals, .lockoutsStarted, .lockoutsCleared: ["bucket"]
        case .hashQueueDepth, .hashQueueRefusals, .hashQueueWait: ["lane"]
        case .tokenCache: ["result"]
        case .idpKeyFetches: ["outcome"]
        case .buildInfo: ["version"]
        default: []
        }
    }

    /// The `# HELP` text.
    package var help: String {
        switch self {
        case .httpRequests: "Requests answered, by listener, RPC name (the route table's), HTTP status and Firebase error code."
        case .httpRequestDuration: "Time from a request's head to its response, by listener and RPC name."
        case .httpInFlight: "Requests being answered now."
        case .httpTimeouts:
            "503s for requests out of time: request_deadline (no database connection within the deadline), http_timeout (no answer within ACCOUNTD_HTTP_REQUEST_TIMEOUT_SECONDS)."
        case .signIns: "Sign-in attempts by provider and outcome (success, second_factor_required, or the Firebase error code)."
        case .signUps: "Accounts created, by the provider they were created with."
        case .sessionsCreated: "Sessions started, by sign-in provider."
        case .sessionsRevoked: "Sessions ended early, by the reason recorded on them."
        case .refreshReuse: "Refresh tokens presented again after rotation (the session is revoked)."
        case .takeoverProtection:
            "Times the takeover rule stripped unverified sign-in methods and revoked sessions: email_link, idp, password_reset."
        case .poolConnections: "Database connections open, by state (idle, leased)."
        case .poolMaxConnections: "The pool's connection limit."
        case .poolWaiters: "Requests waiting for a database connection."
        case .poolWait: "Time a request waited for a database connection."
        case .connectFailures: "Database connection attempts that failed."
        case .databaseUp: "Whether the database answered the scrape's probe (1) or not (0)."
        case .statementDuration: "Prepared statements' round trips, by statement."
        case .outboxDepth: "Messages waiting to be sent."
        case .outboxOldestAge: "Age of the oldest message waiting to be sent."
        case .outboxAttempts: "Delivery attempts."
        case .outboxSends: "Delivery attempts by transport and outcome (sent, retry, failed)."
        case .limitRefusals: "Requests refused by an abuse limit, by bucket."
        case .lockoutsStarted: "Lockouts started (an account or address out of guesses)."
        case .lockoutsCleared: "Lockouts cleared by an operator."
        case .hashQueueDepth: "Password hashes queued or running, by lane."
        case .hashQueueRefusals: "Password hashes refused because the lane was full."
        case .hashQueueWait: "Time a password hash waited for a thread."
        case .tokenCache: "Verified ID token cache lookups (hit, miss)."
        case .revocationListenerUp: "Whether the revocation listener hears the channel (1); while 0 the caches are suspended."
        case .revocationLag: "Time from a revocation's commit to this replica hearing it."
        case .idpKeyFetches: "Identity provider discovery and key fetches by outcome."
        case .buildInfo: "The running version (always 1)."
        case .uptime: "Seconds since the process started."
        case .residentMemory: "Resident memory size."
        case .cpuSeconds: "User and system CPU time spent."
        case .openFDs: "Open file descriptors."
        case .startTime: "Start time of the process since the Unix epoch."
        }
    }
}
