-- pgbench reference for the phone sign-in workload (signInWithPhoneNumber with a test number's
-- session: the session spent, the number's account signed in, a new session).
-- Mirrors PhoneSignInService.signIn(_:) (Sources/AccountCore/Phone/PhoneSignInService.swift), whose
--   transaction is PostgresAccountStore.signInWithPhone(_:) (Sources/AccountPostgres/Stores/
--   PostgresAccountStore+Phone.swift): prove(_:) (the session locked, its code's MAC compared, marked
--   used), tx.user(phoneNumber:) (Prepared.UserByPhoneNumberForUpdate), PhoneRules.signedIn written
--   by writeUser (StoreTransaction+Users.swift) and insertSession(...). Keep in step with those files.
-- Differences, none of which changes the work the database does:
--   * the session hash is sha256('<n>') of a fixture (phone.setup.sql), n a fresh number per
--     transaction (:cbase + client_id + clients * k); the MAC comparison is the service's, in Swift;
--   * timestamps bound from the service's clock are now(); the user's columns are written back as
--     they were read, last_login_at as now();
--   * the session id is a fresh number, its salt 16 bytes derived from it.
\set k :k + 1
\set n :cbase + :client_id + :clients * :k
\set sid :sbase + :n
BEGIN;
SELECT phone_number, purpose, code_mac, attempts, expires_at, used_at IS NOT NULL AS used FROM phone_sessions
 WHERE session_hash = sha256(:n::bytea) AND tenant_id = '' FOR UPDATE \gset s_
UPDATE phone_sessions SET used_at = now(), inbox_session_info = NULL, inbox_code = NULL WHERE session_hash = sha256(:n::bytea);
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
 WHERE u.tenant_id = '' AND u.phone_number = :s_phone_number FOR UPDATE OF u \gset u_
UPDATE users SET email = email, email_verified = email_verified, email_link_signin = email_link_signin,
    initial_email = initial_email, display_name = display_name, photo_url = photo_url, phone_number = phone_number,
    disabled = disabled, custom_attributes = custom_attributes, custom_auth = custom_auth, anonymous = anonymous,
    created_at = created_at, last_login_at = now(), credential_version = credential_version
 WHERE tenant_id = '' AND local_id = :u_local_id;
INSERT INTO sessions (session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method, user_agent, ip_address,
    generation_issued_at, refresh_salt, refresh_key_id, last_mint_at)
VALUES (:sid, :u_local_id, now(), :u_valid_since, 'phone', 'phone',
    NULL, '127.0.0.1', now(), substring(sha256(:sid::bytea) FROM 1 FOR 16), 'bench', now());
COMMIT;
