import AccountCore
import Foundation
import PostgresNIO
import Synchronization

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
    /// The statement's name on the wire: its type name, as PostgresNIO's default gives, but worked
    /// out once per type. The default runs `String(reflecting:)` on every execution, which was 1%
    /// of an admin lookup's server CPU.
    static var name: String { PreparedStatementNames.name(of: Self.self) }

    func makeBindings() throws -> PostgresBindings { binds }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// The type name of each prepared statement, computed at its first execution.
enum PreparedStatementNames {
    private static let names = Mutex<[ObjectIdentifier: String]>([:])

    static func name(of type: any PreparedQuery.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = names.withLock({ $0[key] }) { return name }
        let name = String(reflecting: type)
        names.withLock { $0[key] = name }
        return name
    }

    /// Whether the type's name has been worked out (for tests: PostgresNIO reads it through this).
    static func isRemembered(_ type: any PreparedQuery.Type) -> Bool {
        names.withLock { $0[ObjectIdentifier(type)] != nil }
    }
}

/// The statements' binds, in the order of their `$n`.
private func bindings(_ build: (inout PostgresBindings) throws -> Void) rethrows -> PostgresBindings {
    var binds = PostgresBindings()
    try build(&binds)
    return binds
}

/// The prepared statements of the store (names are the type names, unique per connection). Each
/// type holds its SQL and builds its binds from typed values, in `$n` order; the tenant is always
/// a bind. The rows are decoded by the store's decoders (``PostgresAccountStore/decodeUser(_:)``…).
package enum Prepared {
    /// One user by local id.
    struct UserByLocalID: PreparedQuery {
        static let sql = "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = $1 AND u.local_id = $2"
        let binds: PostgresBindings
        init(tenant: String, localID: String) {
            binds = bindings {
                $0.append(tenant); $0.append(localID)
            }
        }
    }

    /// One user by local id, the row locked until the transaction ends.
    struct UserByLocalIDForUpdate: PreparedQuery {
        static let sql = "\(UserByLocalID.sql) FOR UPDATE OF u"
        let binds: PostgresBindings
        init(tenant: String, localID: String) { binds = UserByLocalID(tenant: tenant, localID: localID).binds }
    }

    /// One user by email (any case).
    struct UserByEmail: PreparedQuery {
        static let sql = "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = $1 AND lower(u.email) = lower($2)"
        let binds: PostgresBindings
        init(tenant: String, email: String) {
            binds = bindings {
                $0.append(tenant); $0.append(email)
            }
        }
    }

    /// One user by email (any case), the row locked until the transaction ends.
    struct UserByEmailForUpdate: PreparedQuery {
        static let sql = "\(UserByEmail.sql) FOR UPDATE OF u"
        let binds: PostgresBindings
        init(tenant: String, email: String) { binds = UserByEmail(tenant: tenant, email: email).binds }
    }

    /// One user by E.164 phone number.
    struct UserByPhoneNumber: PreparedQuery {
        static let sql = "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = $1 AND u.phone_number = $2"
        let binds: PostgresBindings
        init(tenant: String, phoneNumber: String) {
            binds = bindings {
                $0.append(tenant); $0.append(phoneNumber)
            }
        }
    }

    /// One user by phone number, its row locked until the transaction ends.
    struct UserByPhoneNumberForUpdate: PreparedQuery {
        static let sql = "\(UserByPhoneNumber.sql) FOR UPDATE OF u"
        let binds: PostgresBindings
        init(tenant: String, phoneNumber: String) { binds = UserByPhoneNumber(tenant: tenant, phoneNumber: phoneNumber).binds }
    }

    // The list forms below serve lookups of several identifiers. PostgreSQL cannot cost a
    // generic plan for `= ANY($2)` without knowing the array, so it re-plans them on every call
    // (0.5 ms for the user row); a lookup of one identifier uses the single-value forms above,
    // whose generic plan it keeps.

    /// Users by local ids.
    struct UsersByLocalIDs: PreparedQuery {
        static let sql = "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = $1 AND u.local_id = ANY($2) ORDER BY u.local_id"
        let binds: PostgresBindings
        init(tenant: String, localIDs: [String]) {
            binds = bindings {
                $0.append(tenant); $0.append(localIDs)
            }
        }
    }

    /// Users by lower-case emails.
    struct UsersByEmails: PreparedQuery {
        static let sql =
            "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = $1 AND lower(u.email) = ANY($2) ORDER BY u.local_id"
        let binds: PostgresBindings
        init(tenant: String, emails: [String]) {
            binds = bindings {
                $0.append(tenant); $0.append(emails)
            }
        }
    }

    /// Users by E.164 phone numbers.
    struct UsersByPhoneNumbers: PreparedQuery {
        static let sql =
            "SELECT \(PostgresAccountStore.userColumns) WHERE u.tenant_id = $1 AND u.phone_number = ANY($2) ORDER BY u.local_id"
        let binds: PostgresBindings
        init(tenant: String, phoneNumbers: [String]) {
            binds = bindings {
                $0.append(tenant); $0.append(phoneNumbers)
            }
        }
    }

    /// What a revocation check needs of a session: its owner, whether it is live, whether the owner
    /// exists, is disabled, and its `valid_since`.
    struct SessionState: PreparedQuery {
        static let sql = """
            SELECT s.local_id, s.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now()) AND NOT s.user_deleted,
                   u.local_id IS NOT NULL, coalesce(u.disabled, false), coalesce(u.valid_since, 0)
            FROM sessions s LEFT JOIN users u ON u.tenant_id = s.tenant_id AND u.local_id = s.local_id
            WHERE s.session_id = $1
            """
        let binds: PostgresBindings
        init(sessionID: String) { binds = bindings { $0.append(sessionID) } }
    }

    /// A session's owner (``UserColumn``, null when the user is gone) and the session
    /// (``SessionColumn``, from ``sessionColumn``), unlocked: a refresh reads them, decides, and
    /// then writes with ``RefreshWrite``, which re-checks what it decided on. No row: no such session.
    struct SessionAndOwner: PreparedQuery {
        /// Where the session's columns start: after the user's.
        static let sessionColumn = UserColumn.allCases.count
        static let sql = """
            SELECT \(PostgresAccountStore.userSelectList), s.*
            FROM (SELECT \(PostgresAccountStore.sessionColumns), tenant_id FROM sessions WHERE session_id = $1) s
            LEFT JOIN (\(PostgresAccountStore.userTables)) ON u.tenant_id = s.tenant_id AND u.local_id = s.local_id
            """
        let binds: PostgresBindings
        init(sessionID: String) { binds = bindings { $0.append(sessionID) } }
    }

    /// A refresh's write, applied only if nothing it was decided on has changed since the read:
    /// the owner still enabled with the same `valid_since` (locked first, as every path that locks
    /// both rows does), the session still live at the generation read. One row when applied; none
    /// when another writer came first (the refresh reads again).
    struct RefreshWrite: PreparedQuery {
        static let sql = """
            WITH owner AS (
                SELECT FROM users WHERE tenant_id = $11 AND local_id = $8 AND NOT disabled AND valid_since = $9 FOR UPDATE
            ), session AS (
                UPDATE sessions SET refresh_generation = $1, generation_issued_at = $2, last_refresh_at = $3, last_mint_at = $4,
                    user_agent = coalesce($5, user_agent), ip_address = coalesce($6, ip_address), token_format = 2
                WHERE session_id = $7 AND refresh_generation = $10 AND revoked_at IS NULL AND NOT user_deleted
                    AND (expires_at IS NULL OR expires_at > $3) AND EXISTS (SELECT FROM owner)
                RETURNING local_id
            )
            UPDATE users SET last_refresh_at = $3 WHERE tenant_id = $11 AND local_id = (SELECT local_id FROM session) RETURNING true
            """
        let binds: PostgresBindings

        /// `session` as it is to be written (its new generation), `generationRead` the one the
        /// decision was made on, `owner` the user as read.
        init(
            tenant: String, session: SessionRecord, generationRead: Int64, owner: UserRecord, now: Date, mintAt: Date,
            userAgent: String?, ipAddress: String?
        ) {
            binds = bindings {
                $0.append(session.generation)
                $0.append(session.generationIssuedAt)
                $0.append(now)
                $0.append(mintAt)
                $0.append(userAgent)
                $0.append(ipAddress)
                $0.append(session.sessionID)
                $0.append(owner.localID)
                $0.append(owner.validSince)
                $0.append(generationRead)
                $0.append(tenant)
            }
        }
    }

    /// The owner of an address (any case), nothing else.
    struct LocalIDByEmail: PreparedQuery {
        static let sql = "SELECT local_id FROM users WHERE tenant_id = $1 AND lower(email) = lower($2)"
        let binds: PostgresBindings
        init(tenant: String, email: String) {
            binds = bindings {
                $0.append(tenant); $0.append(email)
            }
        }
    }

    /// An action code by the SHA-256 of its text.
    struct ActionCode: PreparedQuery {
        static let sql = """
            SELECT kind, local_id, email, new_email, lang, expires_at, used_at, restore_email_verified, enrollment_id FROM action_codes
            WHERE code_hash = $1
            """
        let binds: PostgresBindings
        init(hash: Data) throws { binds = try bindings { try $0.append(hash) } }
    }

    /// An action code by the SHA-256 of its text, locked until the transaction ends.
    struct ActionCodeForUpdate: PreparedQuery {
        static let sql = "\(ActionCode.sql) FOR UPDATE"
        let binds: PostgresBindings
        init(hash: Data) throws { binds = try ActionCode(hash: hash).binds }
    }

    /// Spends a code if it is unspent and returns it as it was (the columns of ``ActionCode``,
    /// `used_at` null), locked until the transaction ends. A transaction that then refuses the code
    /// rolls the spending back. No row: no such code, or it was spent (a concurrent spender's
    /// commit is waited for and then seen).
    struct ActionCodeSpend: PreparedQuery {
        static let sql = """
            UPDATE action_codes SET used_at = $1, used_reason = 'APPLIED' WHERE code_hash = $2 AND used_at IS NULL
            RETURNING kind, local_id, email, new_email, lang, expires_at, NULL::timestamptz, restore_email_verified, enrollment_id
            """
        let binds: PostgresBindings
        init(hash: Data, now: Date) throws {
            binds = try bindings {
                $0.append(now); try $0.append(hash)
            }
        }
    }

    /// A phone verification session by the SHA-256 of its `sessionInfo`, locked until the
    /// transaction ends (phone sign-in, mfa-phone-tenants.md §A.5 step 2).
    struct PhoneSessionForUpdate: PreparedQuery {
        static let sql = """
            SELECT phone_number, purpose, code_mac, attempts, expires_at, used_at IS NOT NULL, local_id, pending_hash, enrollment_id
            FROM phone_sessions WHERE session_hash = $1 AND tenant_id = $2 FOR UPDATE
            """
        let binds: PostgresBindings
        init(hash: Data, tenant: String) throws {
            binds = try bindings {
                try $0.append(hash); $0.append(tenant)
            }
        }
    }

    /// A pending credential by the SHA-256 of its text (mfa-phone-tenants.md §B.4); `FOR UPDATE`
    /// in ``MFAPendingForUpdate``.
    struct MFAPending: PreparedQuery {
        static let sql = """
            SELECT local_id, sign_in_provider, sign_in_method, sign_in_attributes, credential_version, failures, created_at, expires_at,
                used_at IS NOT NULL
            FROM mfa_pending WHERE pending_hash = $1 AND tenant_id = $2
            """
        let binds: PostgresBindings
        init(hash: Data, tenant: String) throws {
            binds = try bindings {
                try $0.append(hash); $0.append(tenant)
            }
        }
    }

    /// ``MFAPending``, locked until the transaction ends.
    struct MFAPendingForUpdate: PreparedQuery {
        static let sql = "\(MFAPending.sql) FOR UPDATE"
        let binds: PostgresBindings
        init(hash: Data, tenant: String) throws { binds = try MFAPending(hash: hash, tenant: tenant).binds }
    }

    /// A TOTP factor's sealed secret and newest accepted step.
    struct TOTPSecret: PreparedQuery {
        static let sql = """
            SELECT secret_sealed, last_step FROM mfa_factors
            WHERE tenant_id = $1 AND local_id = $2 AND enrollment_id = $3 AND kind = 'TOTP'
            """
        let binds: PostgresBindings
        init(tenant: String, localID: String, enrollmentID: String) {
            binds = bindings {
                $0.append(tenant); $0.append(localID); $0.append(enrollmentID)
            }
        }
    }

    /// Takes one of a factor's guesses, GCRA on its row: the next theoretical arrival moves one
    /// period on from max(it, now), allowed while it stays within burst × period of now. A row
    /// when a guess was left.
    struct FactorGuessReserve: PreparedQuery {
        static let sql = """
            UPDATE mfa_factors SET guess_tat = greatest(coalesce(guess_tat, $4), $4) + make_interval(secs => $5)
            WHERE tenant_id = $1 AND local_id = $2 AND enrollment_id = $3
                AND greatest(coalesce(guess_tat, $4), $4) + make_interval(secs => $5) <= $4 + make_interval(secs => $5 * $6)
            RETURNING 1
            """
        let binds: PostgresBindings
        init(tenant: String, localID: String, enrollmentID: String, now: Date) {
            binds = bindings {
                $0.append(tenant); $0.append(localID); $0.append(enrollmentID); $0.append(now); $0.append(FactorGuesses.period)
                $0.append(Double(FactorGuesses.burst))
            }
        }
    }

    /// A TOTP second factor's writes in one round trip, all or none: the factor's last step moved
    /// to `$4` if that is newer (§B.9 step 6's compare-and-set) and its reserved guess given back,
    /// the pending credential `$6` spent and the user's last sign-in written. A row when the step
    /// was newer.
    struct TOTPSignInWrite: PreparedQuery {
        static let sql = """
            WITH step AS (
                UPDATE mfa_factors SET last_step = $4, guess_tat = guess_tat - interval '\(Int(FactorGuesses.period)) seconds'
                WHERE tenant_id = $1 AND local_id = $2 AND enrollment_id = $3 AND kind = 'TOTP' AND (last_step IS NULL OR last_step < $4)
                RETURNING 1
            ), spent AS (
                UPDATE mfa_pending SET used_at = $5 WHERE pending_hash = $6 AND tenant_id = $1 AND EXISTS (SELECT FROM step)
            )
            UPDATE users SET last_login_at = $5 WHERE tenant_id = $1 AND local_id = $2 AND EXISTS (SELECT FROM step)
            RETURNING true
            """
        let binds: PostgresBindings
        init(tenant: String, localID: String, enrollmentID: String, step: Int64, pendingHash: Data, now: Date) throws {
            binds = try bindings {
                $0.append(tenant); $0.append(localID); $0.append(enrollmentID); $0.append(step); $0.append(now)
                try $0.append(pendingHash)
            }
        }
    }

    /// An SMS second factor's writes after its session was spent: its reserved guess given back,
    /// the pending credential spent, the user's last sign-in written.
    struct MFAPendingSpend: PreparedQuery {
        static let sql = """
            WITH spent AS (UPDATE mfa_pending SET used_at = $1 WHERE pending_hash = $2 AND tenant_id = $3),
            refund AS (
                UPDATE mfa_factors SET guess_tat = guess_tat - interval '\(Int(FactorGuesses.period)) seconds'
                WHERE tenant_id = $3 AND local_id = $4 AND enrollment_id = $5
            )
            UPDATE users SET last_login_at = $1 WHERE tenant_id = $3 AND local_id = $4
            """
        let binds: PostgresBindings
        init(hash: Data, tenant: String, localID: String, enrollmentID: String, now: Date) throws {
            binds = try bindings {
                $0.append(now); try $0.append(hash); $0.append(tenant); $0.append(localID); $0.append(enrollmentID)
            }
        }
    }

    /// A session with its rare facts (an IdP's attributes, the second factor passed): ``SessionInsert``
    /// (`$1`–`$12`) and the three columns.
    struct SessionInsertWithFacts: PreparedQuery {
        static let sql = """
            INSERT INTO sessions (session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method, user_agent, ip_address,
                generation_issued_at, refresh_salt, refresh_key_id, last_mint_at, tenant_id, sign_in_attributes, second_factor,
                second_factor_id)
            VALUES (\(SessionInsert.values(owner: "$2")), $13, $14, $15)
            """
        let binds: PostgresBindings
        init(_ session: NewSession, localID: String, tenant: String, now: Date, ticket: MintTicket, mintAt: Date) throws {
            var binds = try SessionInsert(session, localID: localID, tenant: tenant, now: now, ticket: ticket, mintAt: mintAt).binds
            binds.append(session.signInAttributes)
            binds.append(session.secondFactor?.kind.rawValue)
            binds.append(session.secondFactor?.enrollmentID)
            self.binds = binds
        }
    }

    /// Spends a phone verification session (and forgets the test inbox's copy of it).
    struct PhoneSessionSpend: PreparedQuery {
        static let sql =
            "UPDATE phone_sessions SET used_at = $1, inbox_session_info = NULL, inbox_code = NULL WHERE session_hash = $2"
        let binds: PostgresBindings
        init(hash: Data, now: Date) throws {
            binds = try bindings {
                $0.append(now); try $0.append(hash)
            }
        }
    }

    /// Every column an update decides (``StoreTransaction/writeUser(_:)``): one statement for every
    /// kind of change, so it is planned once per connection.
    struct UserWrite: PreparedQuery {
        static let sql = """
            UPDATE users SET email = $3, email_verified = $4, email_link_signin = $5, initial_email = $6, display_name = $7,
                photo_url = $8, phone_number = $9, disabled = $10, custom_attributes = $11, custom_auth = $12, anonymous = $13,
                created_at = to_timestamp($14), last_login_at = to_timestamp($15), credential_version = $16
            WHERE tenant_id = $1 AND local_id = $2
            """
        let binds: PostgresBindings
        init(tenant: String, user: UserRecord) {
            binds = bindings {
                $0.append(tenant); $0.append(user.localID); $0.append(user.email); $0.append(user.emailVerified)
                $0.append(user.emailLinkSignin); $0.append(user.initialEmail); $0.append(user.displayName); $0.append(user.photoURL)
                $0.append(user.phoneNumber); $0.append(user.disabled); $0.append(user.customAttributes); $0.append(user.customAuth)
                $0.append(user.anonymous); $0.append(user.createdAt.timeIntervalSince1970)
                $0.append(user.lastLoginAt?.timeIntervalSince1970); $0.append(user.credentialVersion)
            }
        }
    }

    /// A new session row (sign-in, sign-up, email link).
    struct SessionInsert: PreparedQuery {
        static let sql = "\(insert) VALUES (\(values(owner: "$2")))"
        let binds: PostgresBindings

        /// The insert's head, which ``SignInWrite`` shares.
        static let insert = """
            INSERT INTO sessions (session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method, user_agent, ip_address,
                generation_issued_at, refresh_salt, refresh_key_id, last_mint_at, tenant_id)
            """

        /// The values of ``insert`` from `$1`–`$12` (``init(_:localID:tenant:now:ticket:mintAt:)``'s
        /// order), with `owner` for the local id.
        static func values(owner: String) -> String { "$1, \(owner), $3, $4, $5, $6, $7, $8, $3, $9, $10, $11, $12" }

        /// `session` for the user `localID`, first minted with `ticket` at `mintAt`.
        init(_ session: NewSession, localID: String, tenant: String, now: Date, ticket: MintTicket, mintAt: Date) throws {
            binds = try bindings {
                $0.append(session.sessionID)
                $0.append(localID)
                $0.append(now)
                $0.append(ticket.authTime)
                $0.append(session.signInProvider)
                $0.append(session.signInMethod)
                $0.append(session.userAgent)
                $0.append(session.ipAddress)
                try $0.append(Data(session.salt))
                $0.append(session.keyID)
                $0.append(mintAt)
                $0.append(tenant)
            }
        }
    }

    /// A password sign-in in one statement: the session as ``SessionInsert`` (`$1`–`$12`), then
    /// `$13` the `valid_since` and `$14` the `credential_version` the caller read. Locks the user
    /// (then inserts the session, whose foreign key needs the user's row: the same order as
    /// everywhere), and writes only if the user is still enabled with both values unchanged; no
    /// row: it wrote nothing.
    struct SignInWrite: PreparedQuery {
        static let sql = """
            WITH owner AS (
                UPDATE users SET last_login_at = $3
                WHERE tenant_id = $12 AND local_id = $2 AND NOT disabled AND valid_since = $13 AND credential_version = $14
                RETURNING local_id
            )
            \(SessionInsert.insert)
            SELECT \(SessionInsert.values(owner: "local_id")) FROM owner
            RETURNING true
            """
        let binds: PostgresBindings

        /// `session` for `user` as read.
        init(_ session: NewSession, user: UserRecord, tenant: String, now: Date, ticket: MintTicket, mintAt: Date) throws {
            var binds = try SessionInsert(session, localID: user.localID, tenant: tenant, now: now, ticket: ticket, mintAt: mintAt).binds
            binds.append(user.validSince)
            binds.append(user.credentialVersion)
            self.binds = binds
        }
    }

    /// The user holding a federated identity `(providerId, rawId)`, the link locked (every
    /// federated sign-in of a returning user starts here).
    struct IdentityOwner: PreparedQuery {
        static let sql = """
            SELECT local_id FROM federated_identities WHERE tenant_id = $1 AND provider_id = $2 AND raw_id = $3 FOR UPDATE
            """
        let binds: PostgresBindings
        init(tenant: String, providerID: String, rawID: String) {
            binds = bindings {
                $0.append(tenant); $0.append(providerID); $0.append(rawID)
            }
        }
    }

    /// A federated sign-in's pending token (its response's `pendingToken`), kept for an hour.
    struct IdPPendingInsert: PreparedQuery {
        static let sql = """
            INSERT INTO idp_pending (token_hash, tenant_id, provider_id, assertion, created_at, expires_at)
            VALUES ($1, $2, $3, $4::jsonb, $5, $6)
            """
        let binds: PostgresBindings
        init(tokenHash: [UInt8], tenant: String, providerID: String, assertion: String, now: Date, until: Date) throws {
            binds = try bindings {
                try $0.append(Data(tokenHash)); $0.append(tenant); $0.append(providerID); $0.append(assertion); $0.append(now)
                $0.append(until)
            }
        }
    }

    /// A nonce-bearing ID token recorded as used; a row back when it was not (or its record expired).
    struct IdPNonceRecord: PreparedQuery {
        static let sql = """
            INSERT INTO idp_used_nonces (nonce_key, expires_at) VALUES ($1, $2)
            ON CONFLICT (nonce_key) DO UPDATE SET expires_at = excluded.expires_at WHERE idp_used_nonces.expires_at <= now()
            RETURNING 1
            """
        let binds: PostgresBindings
        init(key: [UInt8], until: Date) throws {
            binds = try bindings {
                try $0.append(Data(key)); $0.append(until)
            }
        }
    }

    /// An email-link sign-in proved the mailbox.
    struct EmailLinkLogin: PreparedQuery {
        static let sql = """
            UPDATE users SET email_verified = true, email_link_signin = true, last_login_at = $1 WHERE tenant_id = $3 AND local_id = $2
            """
        let binds: PostgresBindings
        init(tenant: String, localID: String, now: Date) {
            binds = bindings {
                $0.append(now); $0.append(localID); $0.append(tenant)
            }
        }
    }
}

extension Prepared {
    /// Every prepared statement, by name, with its SQL: what `accountd-bench statements` prints for
    /// the plans of docs/scaling.md (`scripts/shard-plans`).
    package static let catalogue: [(name: String, sql: String)] = {
        let types: [any PreparedQuery.Type] = [
            UserByLocalID.self,
            UserByLocalIDForUpdate.self,
            UserByEmail.self,
            UserByEmailForUpdate.self,
            UserByPhoneNumber.self,
            UserByPhoneNumberForUpdate.self,
            UsersByLocalIDs.self,
            UsersByEmails.self,
            UsersByPhoneNumbers.self,
            SessionState.self,
            SessionAndOwner.self,
            RefreshWrite.self,
            LocalIDByEmail.self,
            ActionCode.self,
            ActionCodeForUpdate.self,
            ActionCodeSpend.self,
            PhoneSessionForUpdate.self,
            MFAPending.self,
            MFAPendingForUpdate.self,
            TOTPSecret.self,
            FactorGuessReserve.self,
            TOTPSignInWrite.self,
            MFAPendingSpend.self,
            SessionInsertWithFacts.self,
            PhoneSessionSpend.self,
            UserWrite.self,
            SessionInsert.self,
            SignInWrite.self,
            EmailLinkLogin.self,
            IdentityOwner.self,
            IdPPendingInsert.self,
            IdPNonceRecord.self,
        ]
        return types.map { (String(describing: $0), $0.sql) }
    }()
}
