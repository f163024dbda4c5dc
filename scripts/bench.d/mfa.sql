-- pgbench reference for the mfa workload (mfaSignIn:finalize with a TOTP code: a challenged
-- password sign-in's second step, its pending credential spent, the factor's step advanced, the
-- user signed in, a new session with the second factor's claims).
-- Mirrors MFAService.finalizeSignIn(_:) (Sources/AccountCore/MFA/MFAService.swift). Before the
--   transaction, pending(_:): store.pending(hash:) (StoreTransaction.pending(hash:lock: false) in
--   Sources/AccountPostgres/Stores/PostgresAccountStore+MFA.swift) and accounts.store.user(localID:)
--   (Prepared.UserByLocalID in Sources/AccountPostgres/Pool/PreparedStatements.swift, over
--   PostgresAccountStore.userColumns in Sources/AccountPostgres/Stores/StoreRows.swift: the user,
--   its password credential, its federated links and its factors); then totpSignInProof's
--   store.totpSecret(localID:enrollmentID:) and store.reserveGuess (Prepared.FactorGuessReserve:
--   the factor's guessing bound, one guess taken before the code is compared). Then the transaction of
--   PostgresAccountStore.completeSignIn(_:) (same file as pending): the pending credential
--   FOR UPDATE, the user FOR UPDATE (Prepared.UserByLocalIDForUpdate), then Prepared.TOTPSignInWrite
--   (the factor's last_step advanced only if the code's step is newer and its guess given back, the credential spent and
--   last_login_at, in one statement), and StoreTransaction.insertSession
--   (Sources/AccountPostgres/Stores/StoreTransaction.swift: Prepared.SessionInsertWithFacts, the
--   session with its second factor). 10 round trips. Keep in step with those files.
-- Not SQL, so not here: the project's MFA configuration (read from the replica's cache), the abuse
-- limiter's buckets (off in the bench's demo project), opening the sealed secret (AES-GCM) and
-- matching the code (HMAC-SHA1 over the 11 steps of the window): microseconds, against the RS256
-- signature of the new ID token, which the bound adds.
-- Differences, none of which changes the work the database does:
--   * the pending hash is sha256('<n>') of a fixture (mfa.setup.sql), n a fresh number per
--     transaction (:cbase + client_id + clients * k), where the service binds the SHA-256 it
--     computed;
--   * each client signs in its own user (mfa.setup.sql: one per client, one TOTP factor each, its
--     enrolment id the text of 10^18 + client_id), as each wrk connection sends its own users'
--     codes: the step, a per-client counter, is always newer, so the last_step update always
--     applies, as it does for the service's accepted codes;
--   * timestamps bound from the service's clock are now(); auth_time is the user's valid_since
--     (the service binds max(now's second, valid_since): a number either way);
--   * the session id is a fresh number, its salt 16 bytes derived from it; sign_in_attributes is
--     the NULL the pending row holds (\gset would turn it into '');
--   * `used_at IS NOT NULL` is named `used`, for \gset.
\set k :k + 1
\set n :cbase + :client_id + :clients * :k
\set sid :sbase + :n
\set eid 1000000000000000000 + :client_id
\set step 60000000 + :k
SELECT local_id, sign_in_provider, sign_in_method, sign_in_attributes, credential_version, failures, created_at, expires_at,
    used_at IS NOT NULL AS used
FROM mfa_pending WHERE pending_hash = sha256(:n::bytea) AND tenant_id = '' \gset p_
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
WHERE u.tenant_id = '' AND u.local_id = :p_local_id;
SELECT secret_sealed, last_step FROM mfa_factors
WHERE tenant_id = '' AND local_id = :p_local_id AND enrollment_id = :eid AND kind = 'TOTP';
UPDATE mfa_factors SET guess_tat = greatest(coalesce(guess_tat, now()), now()) + make_interval(secs => 600)
WHERE tenant_id = '' AND local_id = :p_local_id AND enrollment_id = :eid
    AND greatest(coalesce(guess_tat, now()), now()) + make_interval(secs => 600) <= now() + make_interval(secs => 600 * 5)
RETURNING 1;
BEGIN;
SELECT local_id, sign_in_provider, sign_in_method, sign_in_attributes, credential_version, failures, created_at, expires_at,
    used_at IS NOT NULL AS used
FROM mfa_pending WHERE pending_hash = sha256(:n::bytea) AND tenant_id = '' FOR UPDATE;
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
WHERE u.tenant_id = '' AND u.local_id = :p_local_id FOR UPDATE OF u \gset u_
WITH step AS (
    UPDATE mfa_factors SET last_step = :step, guess_tat = guess_tat - interval '600 seconds'
    WHERE tenant_id = '' AND local_id = :p_local_id AND enrollment_id = :eid AND kind = 'TOTP'
        AND (last_step IS NULL OR last_step < :step)
    RETURNING 1
), spent AS (
    UPDATE mfa_pending SET used_at = now() WHERE pending_hash = sha256(:n::bytea) AND tenant_id = '' AND EXISTS (SELECT FROM step)
)
UPDATE users SET last_login_at = now() WHERE tenant_id = '' AND local_id = :p_local_id AND EXISTS (SELECT FROM step)
RETURNING true;
INSERT INTO sessions (session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method, user_agent, ip_address,
    generation_issued_at, refresh_salt, refresh_key_id, last_mint_at, tenant_id, sign_in_attributes, second_factor,
    second_factor_id)
VALUES (:sid, :p_local_id, now(), :u_valid_since, :p_sign_in_provider, :p_sign_in_method, NULL, '127.0.0.1',
    now(), substring(sha256(:sid::bytea) FROM 1 FOR 16), 'bench', now(), '', NULL, 'TOTP', :eid);
COMMIT;
