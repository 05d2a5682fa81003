-- A campaign attempt the platform itself refused once the callee had answered (the developer's session cap or the
-- fleet was full when the call connected): the callee heard the operator's short message, and the recipient goes
-- back to the queue instead of failing (docs/campaigns.md). Set by the connect callback or the media stream.
-- SQL only in shared/domains/campaigns/store.ts.
alter table campaign_calls add column requeue_reason text;
-- The dispatcher counts a developer's attempts in flight across all their campaigns (its session cap).
create index campaign_calls_in_flight on campaign_calls (campaign_id) where ended_at is null;
