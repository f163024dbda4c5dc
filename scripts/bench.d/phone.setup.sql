-- Fixture for phone.sql (run with psql -v cbase=… -v count=…): `count` unused SIGN_IN phone
-- sessions n = cbase … cbase + count - 1, session_hash = sha256('<n>'), each for one of the ten
-- test numbers +16505550000…09 (whose accounts the bench's first sign-ins created), shaped like the
-- rows sendVerificationCode stores (a MAC for the code, ten minutes to live).
INSERT INTO phone_sessions (session_hash, tenant_id, purpose, phone_number, code_mac, test_number, created_at, expires_at)
SELECT sha256(n::text::bytea), '', 'SIGN_IN', '+165055500' || lpad((n % 10)::text, 2, '0'), sha256(('code' || n)::bytea), true,
    now(), now() + interval '10 minutes'
FROM generate_series(:cbase::bigint, :cbase::bigint + :count - 1) n;
