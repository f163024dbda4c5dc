-- Fixture for refresh.sql (run with psql -v rbase=… -v clients=… -v signin_users=…): one session
-- per pgbench client, session_id = rbase + client_id, owned by the seeded sign-in users
-- bench<c % signin_users>@example.com, shaped like the sessions signInWithPassword creates.
INSERT INTO sessions (session_id, local_id, created_at, auth_time, sign_in_provider, sign_in_method, user_agent, ip_address,
    generation_issued_at, refresh_salt, refresh_key_id, last_mint_at)
SELECT (:rbase + c)::text, u.local_id, now(), extract(epoch FROM now())::bigint, 'password', 'password', NULL, '127.0.0.1',
    now(), substring(sha256((:rbase + c)::text::bytea) FROM 1 FOR 16), 'bench', now()
FROM generate_series(0, :clients - 1) c
JOIN users u ON u.tenant_id = '' AND lower(u.email) = 'bench' || (c % :signin_users) || '@example.com';
