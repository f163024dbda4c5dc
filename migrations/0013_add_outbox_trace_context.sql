-- The W3C trace context of the request that queued a message (issue 35): the worker sends it on
-- to the mail or SMS webhook, so one trace follows a sign-in link from the request to the relay.
-- Nullable: rows queued outside a traced request, and rows of earlier versions, have none.
ALTER TABLE email_outbox ADD COLUMN traceparent text, ADD COLUMN tracestate text;
ALTER TABLE sms_outbox ADD COLUMN traceparent text, ADD COLUMN tracestate text;
