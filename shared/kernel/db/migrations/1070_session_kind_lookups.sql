-- The calls list tells a session's kind from where it came from (shared/domains/realtime/session-reads.ts): a
-- call replay's run and a campaign's attempt name their session, so both are looked up by it.
create index if not exists campaign_calls_session on campaign_calls (session_id) where session_id is not null;
create index if not exists call_replays_replay_session on call_replays (replay_session_id)
  where replay_session_id is not null;
