-- Fixture for emaillink.sql (run with psql -v cbase=… -v count=… -v users=…): `count` unused
-- EMAIL_SIGNIN codes n = cbase … cbase + count - 1, code_hash = sha256('<n>'), each for a random
-- seeded user user<N>@bench.example, shaped like the rows sendOobCode stores (same settings JSON,
-- an hour to live).
INSERT INTO action_codes (code_hash, kind, local_id, email, new_email, settings, lang, created_at, expires_at)
SELECT sha256(n::text::bytea), 'EMAIL_SIGNIN', u.local_id, u.email, NULL,
    '{"continueURL": "http://localhost/bench", "androidInstallApp": false, "canHandleCodeInApp": true}'::jsonb, 'en', now(), now() + interval '1 hour'
FROM generate_series(:cbase::bigint, :cbase::bigint + :count - 1) n
JOIN users u ON u.tenant_id = '' AND lower(u.email) = 'user' || (abs(hashint8(n)) % :users) || '@bench.example';
