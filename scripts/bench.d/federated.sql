-- pgbench reference for the federated sign-in workload (signInWithIdp with an ID token of a
-- returning user, JWKS cached): its SQL only, for the combined bound (trivial route + RS256 verify
-- + RS256 sign + this SQL).
-- Mirrors FederatedSignInService.signIn(_:) (Sources/AccountCore/Federation/FederatedSignInService.swift):
--   the provider's config comes from each replica's IdPConfigCache (no statement), then PostgresAccountStore.signInFederated's
--   transaction (Sources/AccountPostgres/Accounts/PostgresAccountStore+Federation.swift): the
--   response's pending token (insertPending), identityOwner FOR UPDATE, the user FOR UPDATE
--   (Prepared.UserByLocalIDForUpdate), then the last sign-in and the session in one statement
--   (Prepared.SignInWrite, as a password sign-in writes them). No nonce, flow or sign-in attributes on the bench's tokens. Keep
--   in step with those files.
-- Differences that change no work: the raw id is built from a random number ('bench-idp-' || :i);
-- the session id and pending-token hash are fresh numbers per transaction; timestamps are now().
\set i random(0, :signin_users - 1)
\set k :k + 1
\set sid :sbase + :client_id + :clients * :k
BEGIN;
INSERT INTO idp_pending (token_hash, tenant_id, provider_id, assertion, created_at, expires_at)
VALUES (sha256(:sid::text::bytea), '', 'oidc.bench',
    jsonb_build_object('providerID', 'oidc.bench', 'rawID', 'bench-idp-' || :i, 'emailVerified', true, 'rawUserInfo', '{}'),
    now(), now() + interval '1 hour');
SELECT local_id FROM federated_identities WHERE tenant_id = '' AND provider_id = 'oidc.bench' AND raw_id = 'bench-idp-' || :i
    FOR UPDATE \gset
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
 WHERE u.tenant_id = '' AND u.local_id = :local_id FOR UPDATE OF u \gset
WITH owner AS (
    UPDATE users SET last_login_at = now()
    WHERE tenant_id = '' AND local_id = :local_id AND NOT disabled AND valid_since = :valid_since
        AND credential_version = :credential_version
    RETURNING local_id
)
INSERT INTO sessions (session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method, user_agent, ip_address,
    generation_issued_at, refresh_salt, refresh_key_id, last_mint_at, tenant_id)
SELECT :sid, local_id, now(), extract(epoch FROM now())::bigint, 'oidc.bench', 'oidc.bench', NULL, '127.0.0.1', now(),
    substring(sha256(:sid::text::bytea) FROM 1 FOR 16), 'bench', now(), '' FROM owner
RETURNING true;
COMMIT;
