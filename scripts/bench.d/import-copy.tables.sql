-- The COPY reference's tables (see import-copy.sql), created afresh before every repeat.
-- Not TRUNCATE: an autoanalyze that lands between a TRUNCATE and the next COPY records the users
-- table as empty (reltuples 0), and the foreign-key checks of the credentials COPY, planned from
-- that, scan all of users for each of the 1M rows: one repeat ran for more than 10 minutes. A new
-- table has never been analysed, so the planner reads its real size. Autovacuum stays off on
-- these two tables for the same reason.
DROP TABLE IF EXISTS bench_copy.password_credentials, bench_copy.users;
CREATE TABLE bench_copy.users (LIKE public.users INCLUDING ALL) WITH (autovacuum_enabled = false);
CREATE TABLE bench_copy.password_credentials (
    LIKE public.password_credentials INCLUDING ALL,
    FOREIGN KEY (tenant_id, local_id) REFERENCES bench_copy.users (tenant_id, local_id) ON DELETE CASCADE
) WITH (autovacuum_enabled = false);
