-- pgbench reference for the password sign-in workload (signInWithPassword): its SQL only, for the
-- "combined physical bound" (argon2id verify + RS256 sign + this SQL on the same cores).
-- Mirrors AccountService.signInWithPassword(email:password:client:)
--   (Sources/AccountCore/Accounts/AccountService.swift): first PostgresAccountStore.user(email:)
--   (autocommit), then PostgresAccountStore.startSession(for:...)'s optimistic write, the one
--   statement Prepared.SignInWrite (Sources/AccountPostgres/Pool/PreparedStatements.swift),
--   which applies on the benchmark (nothing changes the users between read and write), so the
--   locked transaction it falls back to never runs. Keep in step with those files.
-- Differences, none of which changes the work the database does:
--   * the email the service binds is built here from a random number (pgbench variables are
--     numbers): 'bench' || :i || '@example.com' — the seeded sign-in users;
--   * timestamps the service binds from its clock are now(); the session id is a fresh number per
--     transaction (:sbase + client_id + clients * k), the refresh salt 16 bytes derived from it;
--   * user agent and IP are what wrk sends: none (NULL) and 127.0.0.1.
\set i random(0, :signin_users - 1)
\set k :k + 1
\set sid :sbase + :client_id + :clients * :k
SELECT u.local_id, u.email, u.email_verified, u.email_link_signin, u.initial_email, u.display_name, u.photo_url,
    u.phone_number, u.disabled, u.custom_attributes, u.custom_auth, u.created_at, u.last_login_at, u.last_refresh_at,
    u.valid_since, u.tokens_valid_after, u.credential_version, u.anonymous,
    p.algorithm, p.hash, p.salt, p.parameters::text, p.updated_at,
    (SELECT coalesce(json_agg(json_build_array(f.provider_id, f.raw_id, f.email, f.display_name, f.photo_url,
             (extract(epoch FROM f.linked_at) * 1000)::bigint) ORDER BY f.linked_at), '[]')::text
       FROM federated_identities f WHERE f.tenant_id = u.tenant_id AND f.local_id = u.local_id),
    (SELECT coalesce(json_agg(json_build_array(m.enrollment_id, m.kind, m.display_name, m.phone_number,
             (extract(epoch FROM m.enrolled_at) * 1000000)::bigint, m.enrolled_at_text) ORDER BY m.enrolled_at, m.enrollment_id), '[]')::text
       FROM mfa_factors m WHERE m.tenant_id = u.tenant_id AND m.local_id = u.local_id)
    FROM users u LEFT JOIN password_credentials p ON p.tenant_id = u.tenant_id AND p.local_id = u.local_id
 WHERE u.tenant_id = '' AND lower(u.email) = lower('bench' || :i || '@example.com') \gset
WITH owner AS (
    UPDATE users SET last_login_at = now()
    WHERE tenant_id = '' AND local_id = :local_id AND NOT disabled AND valid_since = :valid_since
        AND credential_version = :credential_version
    RETURNING local_id
)
INSERT INTO sessions (session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method, user_agent, ip_address,
    generation_issued_at, refresh_salt, refresh_key_id, last_mint_at)
SELECT :sid, local_id, now(), :valid_since, 'password', 'password',
    NULL, '127.0.0.1', now(), substring(sha256(:sid::bytea) FROM 1 FOR 16), 'bench', now() FROM owner
RETURNING true;
