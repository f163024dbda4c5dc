-- Second security review (federation-and-limits.md decisions 13 and 14).
--
-- Anonymity is recorded when an account is created, not derived from "has no credential": an
-- account that lost its last credential (an unlinked identity) must not become anonymous, which
-- would exempt it from the recent-sign-in rule. An account is anonymous from here on only if
-- anonymous sign-up made it and it has gained no credential since (every write that adds one
-- clears the flag). The existing ones: no credential, and a session that anonymous sign-up
-- started (an account an IdP made and that unlinked its identity has none). An anonymous account
-- whose every session is gone can sign in no more and loses nothing by not being marked.
ALTER TABLE users ADD COLUMN anonymous boolean NOT NULL DEFAULT false;
UPDATE users u SET anonymous = true
WHERE u.email IS NULL AND u.phone_number IS NULL AND NOT u.custom_auth
  AND NOT EXISTS (SELECT FROM password_credentials p WHERE p.tenant_id = u.tenant_id AND p.local_id = u.local_id)
  AND NOT EXISTS (SELECT FROM federated_identities f WHERE f.tenant_id = u.tenant_id AND f.local_id = u.local_id)
  AND EXISTS (SELECT FROM sessions s WHERE s.tenant_id = u.tenant_id AND s.local_id = u.local_id AND s.sign_in_provider = 'anonymous');

-- Addresses are stored canonically: an IPv4 client seen through a dual-stack listener as
-- ::ffff:a.b.c.d (or through NAT64 as 64:ff9b::a.b.c.d) is a.b.c.d, so the known-network test
-- matches it against the same client's IPv4 sessions.
UPDATE sessions SET ip_address = host('0.0.0.0'::inet + (ip_address::inet - '::ffff:0.0.0.0'::inet))
WHERE CASE WHEN ip_address ~ '^[0-9A-Fa-f]*:[0-9A-Fa-f:.]*$' THEN ip_address::inet << '::ffff:0.0.0.0/96' ELSE false END;
UPDATE sessions SET ip_address = host('0.0.0.0'::inet + (ip_address::inet - '64:ff9b::'::inet))
WHERE CASE WHEN ip_address ~ '^[0-9A-Fa-f]*:[0-9A-Fa-f:.]*$' THEN ip_address::inet << '64:ff9b::/96' ELSE false END;
