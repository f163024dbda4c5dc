-- pgbench reference for the admin lookup-by-email workload (POST accounts:lookup {"email":[…]}).
-- Mirrors PostgresAccountStore.users(localIDs:emails:phoneNumbers:)
--   (Sources/AccountPostgres/Accounts/PostgresAccountStore.swift), called by LookupRPC
--   (Sources/AccountAPI/IdentityToolkit/Lookup.swift) with one email and no ids or phone numbers:
--   exactly one statement (Prepared.UserByEmail: one email, so the single-value form), outside any
--   transaction. Keep in step with those files.
-- Difference: pgbench variables are numbers, so the email is built here from a random number (the
-- seeded users are user<N>@bench.example, N in [0, :users)). The plan is the same (users_email_key).
\set n random(0, :users - 1)
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
 WHERE u.tenant_id = '' AND lower(u.email) = lower('user' || :n || '@bench.example');
