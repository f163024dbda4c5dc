-- pgbench reference for the email-link sign-in completion workload (signInWithEmailLink with an
-- existing, verified account: code consume + user update + new session).
-- Mirrors ActionCodeService.signInWithEmailLink(email:code:idToken:client:apiKey:)
--   (Sources/AccountCore/ActionCodes/ActionCodeService.swift), which without an ID token goes
--   straight to the transaction of PostgresAccountStore.completeEmailLink(_:) (Sources/AccountPostgres/
--   Accounts/PostgresAccountStore+ActionCodes.swift), branch "existing owner, email verified":
--   spend(_:now:) (Prepared.ActionCodeSpend), user(email:lock: true), the email_verified/
--   email_link_signin/last_login_at UPDATE and insertSession(...) (PostgresAccountStore+Writes.swift);
--   the user is not read back (a verified account's record is known). Keep in step with those files.
-- Differences, none of which changes the work the database does:
--   * the service binds SHA-256(code) as bytea; here the codes are bench fixtures whose hash is
--     sha256('<n>'), so the bind is sha256(:n::bytea), n a fresh number per transaction
--     (:cbase + client_id + clients * k): each code is consumed once, as in the service;
--   * timestamps bound from the service's clock are now(); values the service carries between
--     statements (the code's email, the owner) come back with \gset and are bound as parameters;
--   * the session id is a fresh number, its salt 16 bytes derived from it; auth_time is bound
--     from the user's valid_since (the service binds max(now, valid_since)).
\set k :k + 1
\set n :cbase + :client_id + :clients * :k
\set sid :sbase + :n
BEGIN;
UPDATE action_codes SET used_at = now(), used_reason = 'APPLIED' WHERE code_hash = sha256(:n::bytea) AND used_at IS NULL
RETURNING kind, local_id, email, new_email, lang, expires_at, NULL::timestamptz \gset c_
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
 WHERE u.tenant_id = '' AND lower(u.email) = lower(:c_email) FOR UPDATE OF u \gset u_
UPDATE users SET email_verified = true, email_link_signin = true, last_login_at = now() WHERE tenant_id = '' AND local_id = :u_local_id;
INSERT INTO sessions (session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method, user_agent, ip_address,
    generation_issued_at, refresh_salt, refresh_key_id, last_mint_at)
VALUES (:sid, :u_local_id, now(), :u_valid_since, 'password', 'emailLink',
    NULL, '127.0.0.1', now(), substring(sha256(:sid::bytea) FROM 1 FOR 16), 'bench', now());
COMMIT;
