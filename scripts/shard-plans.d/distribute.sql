-- The schema as a distributed engine (Citus) would hold it, approximated with PostgreSQL's own
-- hash partitioning, which has the same two rules as a distributed table: a unique index must
-- contain the distribution column, and a statement reaches one partition (shard) only when it
-- binds that column by equality. The account tables are distributed by local_id (co-located:
-- one user's rows on one shard); the single-use secrets by their own hash. Every uniqueness the
-- new shape cannot hold is reported (NOTICE) and kept as a plain index, so lookups still have one.
CREATE FUNCTION pg_temp.distribute(t text, key text, shards int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    index record;
    definition text;
BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY HASH (%I)',
                   t || '_d', t, key);
    FOR index IN
        SELECT i.indexrelid, i.indisunique, i.indisprimary, c.relname AS name,
               array(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey))
                 AS columns
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = t::regclass
    LOOP
        definition := replace(pg_get_indexdef(index.indexrelid), format(' ON public.%s ', t), format(' ON public.%s ', t || '_d'));
        definition := replace(definition, format('INDEX %s ON', index.name), format('INDEX %s ON', index.name || '_d'));
        IF index.indisunique AND NOT key = ANY(index.columns) THEN
            RAISE NOTICE 'uniqueness a shard cannot hold: %', pg_get_indexdef(index.indexrelid);
            definition := replace(definition, 'CREATE UNIQUE INDEX', 'CREATE INDEX');
        END IF;
        EXECUTE definition;
    END LOOP;
    EXECUTE format('DROP TABLE %I CASCADE', t);
    EXECUTE format('ALTER TABLE %I RENAME TO %I', t || '_d', t);
    FOR shard IN 0..shards - 1 LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                       t || '_shard' || shard, t, shards, shard);
    END LOOP;
END;
$$;

SELECT pg_temp.distribute('users', 'local_id', 8);
SELECT pg_temp.distribute('password_credentials', 'local_id', 8);
SELECT pg_temp.distribute('federated_identities', 'local_id', 8);
SELECT pg_temp.distribute('sessions', 'local_id', 8);
SELECT pg_temp.distribute('mfa_factors', 'local_id', 8);
SELECT pg_temp.distribute('action_codes', 'code_hash', 8);
SELECT pg_temp.distribute('phone_sessions', 'session_hash', 8);
SELECT pg_temp.distribute('mfa_pending', 'pending_hash', 8);
