-- Abuse limits shared by every replica (issue 22, federation-and-limits.md §E). Keys are
-- HMAC-SHA256(K_limits, bucket ‖ value): no address or email is stored in plain text.

-- GCRA buckets: a bucket "burst B, one per T" allows B at once, then one every T. `tat` is the
-- theoretical arrival time of the next cell; a row is forgotten once `expires_at` has passed.
CREATE TABLE rate_limits (
    bucket      text        NOT NULL,
    key         bytea       NOT NULL,
    tat         timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (bucket, key)
);
CREATE INDEX rate_limits_expiry_idx ON rate_limits (expires_at);

-- Failed password sign-ins per submitted email, split by known and unknown network (§E.4).
CREATE TABLE password_failures (
    key              bytea       NOT NULL,
    class            text        NOT NULL CHECK (class IN ('known', 'unknown')),
    failures         integer     NOT NULL,
    last_failure_at  timestamptz NOT NULL,
    locked_until     timestamptz,
    PRIMARY KEY (key, class)
);
CREATE INDEX password_failures_last_idx ON password_failures (last_failure_at);
