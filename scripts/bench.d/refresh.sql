-- pgbench reference for the token refresh workload (POST /v1/token).
-- Mirrors PostgresAccountStore.refresh(_:) in
--   Sources/AccountPostgres/Accounts/PostgresAccountStore+Refresh.swift statement for statement
--   (same text, same order): the session and its owner read in one statement without locks
--   (Prepared.SessionAndOwner), then one conditional write that locks the owner, then the session,
--   and applies only if neither changed (Prepared.RefreshWrite); 2 round trips, no explicit
--   transaction. PostgresAccountStore.userSelectList, .userTables and .sessionColumns are in
--   Sources/AccountPostgres/Accounts/PostgresAccountStore.swift. Keep in step with those files.
-- Differences, none of which changes the work the database does:
--   * the timestamps the service binds from its clock are now() here;
--   * the values the service computes in Swift between statements (the owner's id and valid_since,
--     the generation read and the next) come back with \gset and are bound as parameters, as the
--     service binds them;
--   * user agent and IP are what wrk sends: no User-Agent header (NULL) and 127.0.0.1.
-- Each client refreshes its own session (bench fixture refresh.setup.sql: session_id =
-- :rbase + client_id), as each wrk connection follows its own rotation.
\set sid :rbase + :client_id
SELECT u.local_id, u.email, u.email_verified, u.email_link_signin, u.initial_email, u.display_name, u.photo_url,
    u.phone_number, u.disabled, u.custom_attributes, u.custom_auth, u.created_at, u.last_login_at, u.last_refresh_at,
    u.valid_since, u.tokens_valid_after, u.credential_version, u.anonymous,
    p.algorithm, p.hash, p.salt, p.parameters::text, p.updated_at,
    (SELECT coalesce(json_agg(json_build_array(f.provider_id, f.raw_id, f.email, f.display_name, f.photo_url,
             (extract(epoch FROM f.linked_at) * 1000)::bigint) ORDER BY f.linked_at), '[]')::text
       FROM federated_identities f WHERE f.tenant_id = u.tenant_id AND f.local_id = u.local_id),
    (SELECT coalesce(json_agg(json_build_array(m.enrollment_id, m.kind, m.display_name, m.phone_number,
             (extract(epoch FROM m.enrolled_at) * 1000000)::bigint, m.enrolled_at_text) ORDER BY m.enrolled_at, m.enrollment_id), '[]')::text
       FROM mfa_factors m WHERE m.tenant_id = u.tenant_id AND m.local_id = u.local_id), s.*
FROM (SELECT session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method, user_agent, ip_address,
    last_refresh_at, refresh_generation, generation_issued_at, refresh_salt, refresh_key_id, last_mint_at,
    expires_at, revoked_at, revoke_reason, user_deleted, claims_overlay, sign_in_attributes, second_factor, second_factor_id
    FROM sessions WHERE session_id = :sid) s
LEFT JOIN (users u LEFT JOIN password_credentials p ON p.tenant_id = u.tenant_id AND p.local_id = u.local_id)
    ON u.tenant_id = '' AND u.local_id = s.local_id \gset
\set generation :refresh_generation + 1
WITH owner AS (
    SELECT FROM users WHERE tenant_id = '' AND local_id = :local_id AND NOT disabled AND valid_since = :valid_since FOR UPDATE
), session AS (
    UPDATE sessions SET refresh_generation = :generation, generation_issued_at = now(), last_refresh_at = now(), last_mint_at = now(),
        user_agent = coalesce(NULL::text, user_agent), ip_address = coalesce('127.0.0.1', ip_address)
    WHERE session_id = :sid AND refresh_generation = :refresh_generation AND revoked_at IS NULL AND NOT user_deleted
        AND (expires_at IS NULL OR expires_at > now()) AND EXISTS (SELECT FROM owner)
    RETURNING local_id
)
UPDATE users SET last_refresh_at = now() WHERE tenant_id = '' AND local_id = (SELECT local_id FROM session) RETURNING true;
