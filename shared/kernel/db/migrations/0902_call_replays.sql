-- Call replays (issue 21 item 4): a recorded call's caller turns played again through the agent (now, or one of
-- its versions), and the per-turn diff of then and now. Written by the replay job, read by the API.
-- session_id and replay_session_id have no foreign key: like rt_sessions.agent_id, a result outlives its traces.
create table call_replays (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  call_id text not null,
  session_id text not null,
  agent_id text not null,
  agent_version_then int,
  agent_version_now int not null,
  -- Scripted LLM replies (the request's llm.replies): the replay runs offline with them instead of the agent's LLM.
  llm_replies jsonb,
  status text not null default 'queued' check (status in ('queued', 'running', 'completed', 'failed')),
  turns_done int not null default 0,
  turns_total int not null default 0,
  stt text,
  llm text,
  replay_session_id text,
  turns jsonb not null default '[]',
  summary jsonb,
  error text,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create index call_replays_call on call_replays (developer_id, session_id, id desc);
