-- Federated sign-in (issue 23, federation-and-limits.md §A, §B): configured providers, the nonces
-- of ID tokens already used, the pending tokens that replay a verified assertion, the redirect
-- flows in progress, and the IdP's extra claims on a session.

-- One row per provider. Secrets (an OIDC or Google client secret, Apple's P-256 key) are sealed
-- with AES-256-GCM under the key-encryption key, bound to the project, provider and field.
CREATE TABLE idp_configs (
    tenant_id             text        NOT NULL DEFAULT '',
    provider_id           text        NOT NULL,
    display_name          text,
    enabled               boolean     NOT NULL DEFAULT false,
    client_id             text        NOT NULL,
    issuer                text,
    code_flow             boolean     NOT NULL DEFAULT false,
    client_secret_sealed  bytea,
    apple                 jsonb,                    -- bundle ids, team id, key id (no key)
    apple_key_sealed      bytea,
    kek_id                text        NOT NULL,
    options               jsonb       NOT NULL DEFAULT '{}',
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, provider_id)
);

-- A nonce-bearing ID token signs in once (§A.4): SHA-256(iss ‖ sub ‖ nonce) until the token's exp.
CREATE TABLE idp_used_nonces (
    nonce_key   bytea       PRIMARY KEY,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX idp_used_nonces_expiry_idx ON idp_used_nonces (expires_at);

-- A verified assertion kept for an hour under the SHA-256 of its pending token (§A.6).
CREATE TABLE idp_pending (
    token_hash   bytea       PRIMARY KEY,
    tenant_id    text        NOT NULL DEFAULT '',
    provider_id  text        NOT NULL,
    assertion    jsonb       NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX idp_pending_expiry_idx ON idp_pending (expires_at);

-- A redirect flow started by createAuthUri (§A.5), under the SHA-256 of its state.
CREATE TABLE idp_flows (
    state_hash    bytea       PRIMARY KEY,
    tenant_id     text        NOT NULL DEFAULT '',
    provider_id   text        NOT NULL,
    session_id    text        NOT NULL,
    redirect_uri  text        NOT NULL,
    context       text,
    code_flow     boolean     NOT NULL,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz
);
CREATE INDEX idp_flows_expiry_idx ON idp_flows (expires_at);

-- The IdP's non-standard claims of the sign-in (firebase.sign_in_attributes), kept across refreshes.
ALTER TABLE sessions ADD COLUMN sign_in_attributes text;

-- Email lookups among federated identities (createAuthUri without providerId, §A.11).
CREATE INDEX federated_identities_email_idx ON federated_identities (tenant_id, lower(email)) WHERE email IS NOT NULL;
