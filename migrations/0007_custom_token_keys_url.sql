-- Custom-token signers whose keys are published at a URL (federation-and-limits.md §C.2 keysUrl):
-- Google's service-account JWKS or x509 metadata, for keys it manages under IAM signBlob. Such a
-- signer is one row with the URL and no key of its own (`spki` empty); its fingerprint is the
-- SHA-256 of the URL, so one URL is registered once per project.
ALTER TABLE custom_token_signers ADD COLUMN keys_url text;
ALTER TABLE custom_token_signers DROP CONSTRAINT custom_token_signers_source_check;
ALTER TABLE custom_token_signers ADD CONSTRAINT custom_token_signers_source_check
    CHECK (source IN ('publicKeyPem', 'x509Certificate', 'jwks', 'keysUrl') AND (source = 'keysUrl') = (keys_url IS NOT NULL));
