-- Custom tokens (issue 23, federation-and-limits.md §C): the public keys operators register to
-- verify the custom tokens their backends mint, and the hashes of tokens already exchanged.

-- One row per key: a registration with a JWKS of three keys is three rows. `spki` is the DER
-- SubjectPublicKeyInfo of an RSA key of at least 2048 bits; `fingerprint` its SHA-256.
CREATE TABLE custom_token_signers (
    signer_id    text        PRIMARY KEY,
    tenant_id    text        NOT NULL DEFAULT '',
    project      text        NOT NULL,
    email        text        NOT NULL,
    key_id       text,
    spki         bytea       NOT NULL,
    fingerprint  bytea       NOT NULL,
    source       text        NOT NULL CHECK (source IN ('publicKeyPem', 'x509Certificate', 'jwks')),
    created_at   timestamptz NOT NULL,
    CONSTRAINT custom_token_signers_fingerprint_key UNIQUE (tenant_id, project, fingerprint)
);
CREATE INDEX custom_token_signers_email_idx ON custom_token_signers (tenant_id, email);

-- A signed custom token signs in once (§C.5): SHA-256 of the token, kept until it could no
-- longer be accepted (exp + 300 s), then swept.
CREATE TABLE used_custom_tokens (
    token_hash  bytea       PRIMARY KEY,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX used_custom_tokens_expiry_idx ON used_custom_tokens (expires_at);
