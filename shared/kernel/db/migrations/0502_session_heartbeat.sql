-- A live session's process touches heartbeat_at while the call goes on. A session whose process died is no longer
-- touched, and the keeper in any realtime process ends it (failed, end_reason worker_lost) and uploads what its
-- recording had spilled to disk, when that disk is still there.
alter table rt_sessions add column heartbeat_at timestamptz;
create index rt_sessions_open on rt_sessions (status, coalesce(heartbeat_at, started_at))
  where status in ('pending', 'active');
