-- Second factors (issue 34, mfa-phone-tenants.md §0.2, §0.3, §B): enrolled factors, TOTP
-- enrolments in progress, pending credentials of challenged sign-ins, and what the sessions and
-- codes of these flows carry.

-- An enrolled factor. A TOTP secret is sealed under the key-encryption key (AAD names the project,
-- tenant, user and enrolment), never stored in clear; last_step is the newest TOTP step accepted,
-- so a code is never accepted twice (§B.11). Every code checked against a factor first reserves a
-- guess on its row (guess_tat), atomically, so parallel guesses cannot overrun the bound; a right
-- code gives its guess back.
CREATE TABLE mfa_factors (
    tenant_id      text        NOT NULL DEFAULT '',
    local_id       text        NOT NULL,
    enrollment_id  text        NOT NULL,
    kind           text        NOT NULL CHECK (kind IN ('PHONE', 'TOTP')),
    display_name   text,
    phone_number   text,
    secret_sealed  bytea,
    kek_id         text,
    last_step      bigint,
    guess_tat      timestamptz,                 -- the factor's guessing bound (GCRA: 5, then one per 10 min)
    enrolled_at    timestamptz NOT NULL,
    enrolled_at_text text,                      -- an admin's or an import's enrolledAt, returned as given
    PRIMARY KEY (tenant_id, local_id, enrollment_id),
    FOREIGN KEY (tenant_id, local_id) REFERENCES users (tenant_id, local_id) ON DELETE CASCADE,
    CHECK ((kind = 'PHONE') = (phone_number IS NOT NULL)),
    CHECK ((kind = 'TOTP') = (secret_sealed IS NOT NULL))
);
CREATE UNIQUE INDEX mfa_factors_phone_key ON mfa_factors (tenant_id, local_id, phone_number) WHERE phone_number IS NOT NULL;

-- A TOTP enrolment between start and finalize: the SHA-256 of its sessionInfo and the sealed
-- secret. Five wrong codes kill it; a success spends it.
CREATE TABLE totp_enrollments (
    session_hash   bytea       PRIMARY KEY,
    tenant_id      text        NOT NULL DEFAULT '',
    local_id       text        NOT NULL,
    secret_sealed  bytea       NOT NULL,
    kek_id         text        NOT NULL,
    attempts       integer     NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz
);
CREATE INDEX totp_enrollments_expiry_idx ON totp_enrollments (expires_at);

-- A challenged first factor (§B.4): the SHA-256 of the mfaPendingCredential, the session the
-- second factor will start, and the credential version it was issued against.
CREATE TABLE mfa_pending (
    pending_hash        bytea       PRIMARY KEY,
    tenant_id           text        NOT NULL DEFAULT '',
    local_id            text        NOT NULL,
    sign_in_provider    text        NOT NULL,
    sign_in_method      text        NOT NULL,
    sign_in_attributes  text,
    credential_version  bigint      NOT NULL,
    failures            integer     NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL,
    expires_at          timestamptz NOT NULL,
    used_at             timestamptz
);
CREATE INDEX mfa_pending_expiry_idx ON mfa_pending (expires_at);

-- SMS second-factor sessions are phone sessions bound to a user (enrolment) or to a pending
-- credential and factor (sign-in).
ALTER TABLE phone_sessions ADD COLUMN local_id text, ADD COLUMN pending_hash bytea, ADD COLUMN enrollment_id text;

-- A session that passed a second factor says which (firebase.sign_in_second_factor and
-- second_factor_identifier, §B.10), through every refresh.
ALTER TABLE sessions ADD COLUMN second_factor text, ADD COLUMN second_factor_id text;

-- REVERT_SECOND_FACTOR_ADDITION (§B.12) undoes one enrolment.
ALTER TABLE action_codes ADD COLUMN enrollment_id text;
ALTER TABLE action_codes DROP CONSTRAINT action_codes_kind_check;
ALTER TABLE action_codes ADD CONSTRAINT action_codes_kind_check CHECK (kind IN ('PASSWORD_RESET', 'VERIFY_EMAIL', 'EMAIL_SIGNIN',
    'VERIFY_AND_CHANGE_EMAIL', 'RECOVER_EMAIL', 'REVERT_SECOND_FACTOR_ADDITION'));
