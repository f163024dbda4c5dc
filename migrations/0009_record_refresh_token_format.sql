-- Refresh tokens of format 2 carry their session's salt, so their MAC is checked before any database
-- read; format 1 tokens (issued before) are checked after their session is read. Each session records
-- the format of the token it last issued: existing sessions hold format 1 until they refresh, new ones
-- start at 2. With ACCOUNTD_REFRESH_ACCEPT_V1=auto the server accepts format 1 only while, at start,
-- some live session still holds one.
ALTER TABLE sessions ADD COLUMN token_format smallint NOT NULL DEFAULT 1;
ALTER TABLE sessions ALTER COLUMN token_format SET DEFAULT 2;
CREATE INDEX sessions_format_1_idx ON sessions (session_id) WHERE token_format = 1 AND revoked_at IS NULL;
