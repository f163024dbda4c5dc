-- The first schema: accounts, their credentials and sessions, email action codes, signing keys,
-- the email outbox and the audit trail. Every project row carries tenant_id ('' = default tenant).

CREATE TABLE users (
    tenant_id           text        NOT NULL DEFAULT '',
    local_id            text        NOT NULL,
    email               text,                       -- stored lower-case
    email_verified      boolean     NOT NULL DEFAULT false,
    email_link_signin   boolean     NOT NULL DEFAULT false,
    initial_email       text,
    display_name        text,
    photo_url           text,
    phone_number        text,                       -- E.164
    disabled            boolean     NOT NULL DEFAULT false,
    custom_attributes   text,                       -- a JSON object, serialised as sent
    custom_auth         boolean     NOT NULL DEFAULT false,
    created_at          timestamptz NOT NULL,
    last_login_at       timestamptz,
    last_refresh_at     timestamptz,
    tokens_valid_after  timestamptz NOT NULL,       -- R: the last revoke-all instant, microseconds
    valid_since         bigint      NOT NULL,       -- V: what the wire shows, whole seconds (§3.5)
    credential_version  bigint      NOT NULL DEFAULT 0, -- bumped whenever the password changes or goes
    PRIMARY KEY (tenant_id, local_id),
    CHECK (email IS NULL OR email = lower(email))
);
CREATE UNIQUE INDEX users_email_key ON users (tenant_id, lower(email)) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX users_phone_key ON users (tenant_id, phone_number) WHERE phone_number IS NOT NULL;
CREATE INDEX users_created_idx ON users (tenant_id, created_at);

CREATE TABLE password_credentials (
    tenant_id   text        NOT NULL DEFAULT '',
    local_id    text        NOT NULL,
    algorithm   text        NOT NULL,               -- ARGON2ID, or an imported algorithm
    hash        bytea       NOT NULL,               -- ARGON2ID: the PHC string's bytes
    salt        bytea,
    parameters  jsonb       NOT NULL DEFAULT '{}',  -- imported algorithms' parameters
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, local_id),
    FOREIGN KEY (tenant_id, local_id) REFERENCES users (tenant_id, local_id) ON DELETE CASCADE
);

CREATE TABLE federated_identities (
    tenant_id     text        NOT NULL DEFAULT '',
    local_id      text        NOT NULL,
    provider_id   text        NOT NULL,
    raw_id        text        NOT NULL,
    email         text,
    display_name  text,
    photo_url     text,
    linked_at     timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, local_id, provider_id),
    UNIQUE (tenant_id, provider_id, raw_id),
    FOREIGN KEY (tenant_id, local_id) REFERENCES users (tenant_id, local_id) ON DELETE CASCADE
);

-- A row per sign-in. No foreign key to users: a deleted user's sessions stay as tombstones so a
-- refresh can answer USER_NOT_FOUND. Refresh tokens are never stored: only the generation counter
-- and the per-session salt from which the token's MAC key is derived.
CREATE TABLE sessions (
    session_id            text        PRIMARY KEY,
    tenant_id             text        NOT NULL DEFAULT '',
    local_id              text        NOT NULL,
    created_at            timestamptz NOT NULL,
    auth_time             bigint      NOT NULL,     -- seconds
    sign_in_provider      text        NOT NULL,
    sign_in_method        text        NOT NULL,
    user_agent            text,
    ip_address            text,
    last_refresh_at       timestamptz,
    refresh_generation    bigint      NOT NULL DEFAULT 0,
    generation_issued_at  timestamptz NOT NULL,
    refresh_salt          bytea       NOT NULL,
    refresh_key_id        text        NOT NULL,
    last_mint_at          timestamptz,
    expires_at            timestamptz,
    revoked_at            timestamptz,
    revoke_reason         text,
    user_deleted          boolean     NOT NULL DEFAULT false,
    claims_overlay        text                      -- custom-token claims, a JSON object
);
CREATE INDEX sessions_user_idx ON sessions (tenant_id, local_id, created_at DESC);
CREATE INDEX sessions_revoked_idx ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;

-- Email action codes: only the SHA-256 of the code is kept.
CREATE TABLE action_codes (
    code_hash     bytea       PRIMARY KEY,
    tenant_id     text        NOT NULL DEFAULT '',
    kind          text        NOT NULL CHECK (kind IN ('PASSWORD_RESET', 'VERIFY_EMAIL', 'EMAIL_SIGNIN',
                                                       'VERIFY_AND_CHANGE_EMAIL', 'RECOVER_EMAIL')),
    local_id      text,
    email         text        NOT NULL,
    new_email     text,
    settings      jsonb       NOT NULL DEFAULT '{}',
    lang          text        NOT NULL DEFAULT 'en',
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz,
    used_reason   text
);
CREATE INDEX action_codes_user_idx ON action_codes (tenant_id, local_id) WHERE used_at IS NULL;
CREATE INDEX action_codes_expiry_idx ON action_codes (expires_at);

-- Token signing keys. The private key is sealed (AES-GCM) under the key-encryption key.
CREATE TABLE signing_keys (
    kid                     text        PRIMARY KEY,
    algorithm               text        NOT NULL DEFAULT 'RS256',
    public_key_der          bytea       NOT NULL,
    certificate_pem         text        NOT NULL,
    private_key_sealed      bytea       NOT NULL,
    kek_id                  text        NOT NULL,
    state                   text        NOT NULL CHECK (state IN ('next', 'current', 'retired')),
    created_at              timestamptz NOT NULL,
    activated_at            timestamptz,
    retired_at              timestamptz,
    remove_after            timestamptz
);
CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys ((state)) WHERE state = 'current';

-- Every email is written here in the transaction that made its code; a worker delivers it and
-- then erases the link from the row.
CREATE TABLE email_outbox (
    id               bigserial   PRIMARY KEY,
    tenant_id        text        NOT NULL DEFAULT '',
    kind             text        NOT NULL,
    recipient        text        NOT NULL,
    subject          text        NOT NULL,
    body_text        text,
    body_html        text,
    status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    sent_at          timestamptz
);
CREATE INDEX email_outbox_due_idx ON email_outbox (next_attempt_at) WHERE status = 'pending';

CREATE TABLE audit_events (
    id           bigserial   PRIMARY KEY,
    tenant_id    text        NOT NULL DEFAULT '',
    occurred_at  timestamptz NOT NULL DEFAULT now(),
    actor_type   text        NOT NULL CHECK (actor_type IN ('admin', 'user', 'system')),
    actor        text        NOT NULL,
    action       text        NOT NULL,
    local_id     text,
    details      jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_events_user_idx ON audit_events (tenant_id, local_id, occurred_at DESC);
