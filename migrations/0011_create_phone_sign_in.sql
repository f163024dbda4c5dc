-- Phone sign-in (issue 33, mfa-phone-tenants.md §0.2–0.4, §A): verification sessions, temporary
-- proofs, the SMS outbox, and the project configuration resource.

-- A verification session (§A.4): the SHA-256 of its sessionInfo and the HMAC of its code, never
-- the values themselves (inbox_* only while the demo test inbox is on, §A.7). Five wrong codes
-- kill it; a success spends it.
CREATE TABLE phone_sessions (
    session_hash        bytea       PRIMARY KEY,
    tenant_id           text        NOT NULL DEFAULT '',
    purpose             text        NOT NULL CHECK (purpose IN ('SIGN_IN', 'MFA_ENROLL', 'MFA_SIGN_IN')),
    phone_number        text        NOT NULL,
    code_mac            bytea       NOT NULL,
    test_number         boolean     NOT NULL DEFAULT false,
    attempts            integer     NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL,
    expires_at          timestamptz NOT NULL,
    used_at             timestamptz,
    inbox_session_info  text,
    inbox_code          text
);
CREATE INDEX phone_sessions_expiry_idx ON phone_sessions (expires_at);
CREATE INDEX phone_sessions_inbox_idx ON phone_sessions (created_at) WHERE inbox_session_info IS NOT NULL;

-- A temporaryProof (§A.5 link step 3): the SHA-256 of the proof, bound to the number.
CREATE TABLE temporary_proofs (
    proof_hash    bytea       PRIMARY KEY,
    tenant_id     text        NOT NULL DEFAULT '',
    phone_number  text        NOT NULL,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz
);
CREATE INDEX temporary_proofs_expiry_idx ON temporary_proofs (expires_at);

-- SMS waiting for delivery (§A.7): the message sealed under the key-encryption key (it holds the
-- code), erased once delivered, refused for good, or past the code's expiry.
CREATE TABLE sms_outbox (
    id               bigserial   PRIMARY KEY,
    tenant_id        text        NOT NULL DEFAULT '',
    message_id       text        NOT NULL UNIQUE,
    payload_sealed   bytea,
    kek_id           text        NOT NULL,
    status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    last_error       text,
    created_at       timestamptz NOT NULL,
    sent_at          timestamptz
);
CREATE INDEX sms_outbox_due_idx ON sms_outbox (next_attempt_at) WHERE status = 'pending';

-- The project configuration resource (§0.4): the members an admin set through
-- v2/projects/{p}/config, per tenant ('' = the project).
CREATE TABLE project_config (
    tenant_id   text        PRIMARY KEY,
    document    jsonb       NOT NULL,
    updated_at  timestamptz NOT NULL
);
