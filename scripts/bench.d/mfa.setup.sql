-- Fixtures for the mfa workload: pending credentials shaped like the rows a challenged password
-- sign-in leaves (SecondFactorGate.challenge → PostgresAccountStore.createPending: provider and
-- method 'password', the user's current credential_version, ten minutes to live), with
-- pending_hash = sha256('<n>'), the credential on the wire being the decimal text of n. Written
-- here rather than minted through signInWithPassword, whose argon2id verify (~100/s) could not
-- keep up with the workload. created_at is now(): after the user's tokens_valid_after (its TOTP
-- enrolment revoked its sessions) and, as this runs right before each run, well within the 300 s
-- a TOTP answer has after its first factor. Two uses:
--
-- psql -v clients=… -v cbase=… -v count=… (pgbench's, for mfa.sql): one user per client c,
-- local_id mfapgbench<c, 18 digits>, shaped like the service's users after their enrolment (a
-- verified email, an argon2id password credential, credential_version 1) with one TOTP factor
-- (enrolment id the text of 10^18 + c, a 48-byte sealed secret as AES-GCM seals 20 bytes,
-- last_step set back to 0 so that mfa.sql's steps are newer again in every run); and `count` pending
-- credentials n = cbase … cbase + count - 1, each for the user of the client that will spend it
-- ((n - cbase) % clients, as mfa.sql numbers them).
--
-- psql < FILE (the service's, no variables): the pending credentials of FILE, lines "n<TAB>localId"
-- written by benchtool.py mfa-lines for the users it took the wrk lines' codes from.
\if :{?clients}
INSERT INTO users (tenant_id, local_id, email, email_verified, created_at, tokens_valid_after, valid_since, credential_version)
SELECT '', 'mfapgbench' || lpad(c::text, 18, '0'), 'mfa-pgbench' || c || '@bench.example', true, now(), now(),
    extract(epoch FROM now())::bigint + 1, 1
FROM generate_series(0, :clients - 1) c
ON CONFLICT DO NOTHING;
INSERT INTO password_credentials (tenant_id, local_id, algorithm, hash, salt, parameters, updated_at)
SELECT '', 'mfapgbench' || lpad(c::text, 18, '0'), 'ARGON2ID',
    convert_to('$argon2id$v=19$m=19456,t=2,p=1$' || rtrim(encode(substring(sha256(('salt' || c)::bytea) FROM 1 FOR 16), 'base64'), '=')
        || '$' || rtrim(encode(sha256(('hash' || c)::bytea), 'base64'), '='), 'UTF8'),
    NULL, '{}', now()
FROM generate_series(0, :clients - 1) c
ON CONFLICT DO NOTHING;
INSERT INTO mfa_factors (tenant_id, local_id, enrollment_id, kind, display_name, secret_sealed, kek_id, last_step, enrolled_at)
SELECT '', 'mfapgbench' || lpad(c::text, 18, '0'), (1000000000000000000 + c)::text, 'TOTP', 'bench',
    sha256(('sealed' || c)::bytea) || substring(sha256(('tag' || c)::bytea) FROM 1 FOR 16), 'bench', 0, now()
FROM generate_series(0, :clients - 1) c
ON CONFLICT (tenant_id, local_id, enrollment_id) DO UPDATE SET last_step = 0;
INSERT INTO mfa_pending (pending_hash, tenant_id, local_id, sign_in_provider, sign_in_method, credential_version, created_at,
    expires_at)
SELECT sha256(n::text::bytea), '', u.local_id, 'password', 'password', u.credential_version, now(), now() + interval '10 minutes'
FROM generate_series(:cbase::bigint, :cbase::bigint + :count - 1) n
JOIN users u ON u.tenant_id = '' AND u.local_id = 'mfapgbench' || lpad(((n - :cbase) % :clients)::text, 18, '0');
\else
CREATE TEMP TABLE bench_mfa_pending (n bigint, local_id text);
\copy bench_mfa_pending FROM pstdin
INSERT INTO mfa_pending (pending_hash, tenant_id, local_id, sign_in_provider, sign_in_method, credential_version, created_at,
    expires_at)
SELECT sha256(f.n::text::bytea), '', u.local_id, 'password', 'password', u.credential_version, now(), now() + interval '10 minutes'
FROM bench_mfa_pending f JOIN users u ON u.tenant_id = '' AND u.local_id = f.local_id;
\endif
