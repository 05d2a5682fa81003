-- Cancelling a campaign hangs up its calls in progress (docs/campaigns.md): the attempt records why it was hung
-- up (the realtime role ends the session with that reason when Twilio stops the stream) and when, so a lost
-- hang-up job is sent again by the reconciler. SQL only in shared/domains/campaigns/store.ts.
alter table campaign_calls add column hangup_reason text, add column hangup_requested_at timestamptz;
-- The reconciler's look-ups: attempts dialled and not ended (a final status callback may be lost), by dial time.
create index campaign_calls_live on campaign_calls (dialed_at) where ended_at is null and call_sid is not null;
