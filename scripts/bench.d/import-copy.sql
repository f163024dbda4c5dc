-- COPY reference for the import workload (admin accounts:batchCreate, prehashed passwords).
-- The service's import is PostgresAccountStore.importUsers(_:allowOverwrite:now:)
--   (Sources/AccountPostgres/Stores/PostgresAccountStore+Import.swift; since issue 36 a clean
--   batch goes through insertBatch: COPY … FROM STDIN (text) for users and password_credentials
--   (StoreTransaction.copyUsers), INSERT … SELECT FROM unnest for audit_events, under one
--   savepoint; importOneByOne only on conflicts),
--   reached through BatchCreateRPC (Sources/AccountAPI/Admin/BatchCreate.swift) and
--   AdminService.importUsers (Sources/AccountCore/Admin/UserImport.swift).
-- The reference writes the very rows the import wrote (users + password_credentials, exported
-- after seeding) with COPY into empty tables shaped like the real ones: same columns, defaults,
-- CHECK constraints and indexes (LIKE … INCLUDING ALL) and the same foreign key. They are logged
-- tables in the same cluster, so COPY pays the same WAL and commit as the service. scripts/bench
-- times, per repeat: fresh tables from import-copy.tables.sql (untimed), then one transaction of
--   \copy bench_copy.users FROM '<users rows>'
--   \copy bench_copy.password_credentials FROM '<credential rows>'
-- (The service also writes one audit_events row per imported user; the reference does not.)
DROP SCHEMA IF EXISTS bench_copy CASCADE;
CREATE SCHEMA bench_copy;
\ir import-copy.tables.sql
-- The rows, in import order (run with psql -v users_file=… -v credentials_file=…, paths without spaces).
COPY (SELECT * FROM public.users WHERE tenant_id = '' AND email LIKE '%@bench.example' ORDER BY local_id) TO STDOUT \g :users_file
COPY (SELECT p.* FROM public.password_credentials p JOIN public.users u USING (tenant_id, local_id)
      WHERE u.tenant_id = '' AND u.email LIKE '%@bench.example' ORDER BY p.local_id) TO STDOUT \g :credentials_file
