-- Idempotency records of key and agent creation stored the whole response, raw API key or tool-signing secret
-- included. New records never hold a secret (api/plugins/idempotency.ts); drop the old ones rather than keep
-- secrets at rest for the rest of their 24 h window. A retry of one of those requests runs it again.
delete from idempotency_keys
 where method = 'POST' and split_part(path, '?', 1) in ('/v1/keys', '/v1/agents', '/v1/agents/provision');
