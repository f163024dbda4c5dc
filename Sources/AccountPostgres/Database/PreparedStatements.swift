import PostgresNIO

/// A statement PostgreSQL parses and plans once per connection, then only executes.
///
/// `query(_:)` sends every statement unnamed, so it is parsed and planned on every call. For the
/// user row (a join plus a `json_agg` subquery) planning took 1–3 ms against 0.5 ms to execute,
/// measured with pgbench `-M extended` against `-M prepared`; the statements on the hot paths
/// (token refresh, sign-in, lookups, revocation checks) are therefore named, prepared ones.
/// Each type is one statement; its rows are returned undecoded, for the store's decoders.
protocol PreparedQuery: PostgresPreparedStatement where Row == PostgresRow {
    var binds: PostgresBindings { get }
}

extension PreparedQuery {
    func makeBindings() throws -> PostgresBindings { binds }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// The prepared statements of the store (names are the type names, unique per connection).
enum Prepared {
    /// `$1` local id.
    struct UserByLocalID: PreparedQuery {
        static let sql = "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = '' AND u.local_id = $1"
        let binds: PostgresBindings
    }

    /// `$1` local id; the user row stays locked until the transaction ends.
    struct UserByLocalIDForUpdate: PreparedQuery {
        static let sql = "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = '' AND u.local_id = $1 FOR UPDATE OF u"
        let binds: PostgresBindings
    }

    /// `$1` email (any case).
    struct UserByEmail: PreparedQuery {
        static let sql = "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = '' AND lower(u.email) = lower($1)"
        let binds: PostgresBindings
    }

    /// `$1` local ids.
    struct UsersByLocalIDs: PreparedQuery {
        static let sql = "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = '' AND u.local_id = ANY($1) ORDER BY u.local_id"
        let binds: PostgresBindings
    }

    /// `$1` lower-case emails.
    struct UsersByEmails: PreparedQuery {
        static let sql =
            "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = '' AND lower(u.email) = ANY($1) ORDER BY u.local_id"
        let binds: PostgresBindings
    }

    /// `$1` E.164 phone numbers.
    struct UsersByPhoneNumbers: PreparedQuery {
        static let sql =
            "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = '' AND u.phone_number = ANY($1) ORDER BY u.local_id"
        let binds: PostgresBindings
    }

    /// `$1` session id: what a revocation check needs.
    struct SessionState: PreparedQuery {
        static let sql = """
            SELECT s.local_id, s.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now()) AND NOT s.user_deleted,
                   u.local_id IS NOT NULL, coalesce(u.disabled, false), coalesce(u.valid_since, 0)
            FROM sessions s LEFT JOIN users u ON u.tenant_id = s.tenant_id AND u.local_id = s.local_id
            WHERE s.session_id = $1
            """
        let binds: PostgresBindings
    }

    /// `$1` session id: a refresh's lock timeout (set_config(…, true) is SET LOCAL) and the
    /// session's owner, in one round trip.
    struct RefreshOwner: PreparedQuery {
        static let sql = "SELECT set_config('lock_timeout', '5s', true), (SELECT local_id FROM sessions WHERE session_id = $1)"
        let binds: PostgresBindings
    }

    /// `$1` session id, locked until the transaction ends.
    struct SessionForUpdate: PreparedQuery {
        static let sql = "SELECT \(PostgresAccountStore.sessionColumns) FROM sessions WHERE session_id = $1 FOR UPDATE"
        let binds: PostgresBindings
    }

    /// A refresh's writes, session and user, both rows already locked: `$1` generation, `$2`
    /// generation issued at, `$3` now, `$4` mint instant, `$5` user agent, `$6` IP address,
    /// `$7` session id, `$8` local id.
    struct RefreshWrite: PreparedQuery {
        static let sql = """
            WITH session AS (
                UPDATE sessions SET refresh_generation = $1, generation_issued_at = $2, last_refresh_at = $3, last_mint_at = $4,
                    user_agent = coalesce($5, user_agent), ip_address = coalesce($6, ip_address)
                WHERE session_id = $7
            )
            UPDATE users SET last_refresh_at = $3 WHERE tenant_id = '' AND local_id = $8
            """
        let binds: PostgresBindings
    }
}
