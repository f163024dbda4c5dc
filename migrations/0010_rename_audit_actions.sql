-- The audit trail spells its actions one way (AuditAction): the reference's upper-case names. Events
-- recorded before carried dotted ones; they are renamed so a filter or a reader needs one spelling.
UPDATE audit_events SET action = CASE action
    WHEN 'user.create' THEN 'USER_CREATED'
    WHEN 'user.update' THEN 'USER_UPDATED'
    WHEN 'user.delete' THEN 'USER_DELETED'
    WHEN 'user.import' THEN 'USER_IMPORTED'
    WHEN 'sessions.revoke' THEN 'SESSIONS_REVOKED'
    WHEN 'sessions.revoke_all' THEN 'ALL_SESSIONS_REVOKED'
    WHEN 'federated.link' THEN 'IDENTITY_LINKED'
    WHEN 'federated.link.takeover' THEN 'IDENTITY_LINKED_AFTER_TAKEOVER'
    WHEN 'customTokenSigner.add' THEN 'CUSTOM_TOKEN_SIGNER_ADDED'
    WHEN 'customTokenSigner.remove' THEN 'CUSTOM_TOKEN_SIGNER_REMOVED'
    ELSE action END
WHERE action IN ('user.create', 'user.update', 'user.delete', 'user.import', 'sessions.revoke', 'sessions.revoke_all',
                 'federated.link', 'federated.link.takeover', 'customTokenSigner.add', 'customTokenSigner.remove');
