-- Realtime voice sessions (Twilio media streams and direct WebSocket sessions) and their traces.
-- agent_id has no foreign key: a trace outlives the agent it talked to (an archived or deleted agent keeps its
-- history readable), and traces are written by the realtime role only.
create table rt_sessions (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  agent_id text not null,
  channel text not null check (channel in ('twilio', 'direct')),
  direction text not null default 'inbound' check (direction in ('inbound', 'outbound')),
  status text not null default 'pending' check (status in ('pending', 'active', 'completed', 'failed', 'expired')),
  call_sid text,
  stream_sid text,
  from_number text,
  to_number text,
  instance_id text,
  task_id text,
  stt_provider text,
  tts_provider text,
  llm_provider text,
  end_reason text,
  error text,
  recording_key text,
  recording_ms int,
  -- Aggregates computed at the end: totalDurationMs, avgTurnLatencyMs, toolExecutions, interruptions, …
  metrics jsonb not null default '{}',
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  started_at timestamptz,
  ended_at timestamptz
);
create index rt_sessions_page on rt_sessions (developer_id, id desc);
create index rt_sessions_agent_page on rt_sessions (developer_id, agent_id, id desc);
create index rt_sessions_call on rt_sessions (developer_id, call_sid) where call_sid is not null;

-- One row per spoken turn. Times are milliseconds from the session start. For an assistant turn `text` is what
-- the caller heard (truncated at a barge-in) and `full_text` what the model wrote.
create table rt_turns (
  session_id text not null references rt_sessions(id) on delete cascade,
  idx int not null,
  speaker text not null check (speaker in ('user', 'assistant')),
  text text not null default '',
  full_text text,
  start_ms int not null default 0,
  end_ms int not null default 0,
  stt_ms int,
  llm_ms int,
  tts_ms int,
  -- Caller's last speech sample → first agent audio frame sent (assistant turns answering a user turn).
  latency_ms int,
  endpoint_ms int,
  -- Time of the turn not spent in a stage or the endpointing wait: queueing, codecs, framing (platform overhead).
  overhead_ms int,
  interrupted boolean not null default false,
  error text,
  primary key (session_id, idx)
);

create table rt_tool_executions (
  id bigint generated always as identity primary key,
  session_id text not null references rt_sessions(id) on delete cascade,
  turn_idx int not null,
  name text not null,
  ok boolean not null,
  error text,
  duration_ms int not null,
  at_ms int not null
);
create index rt_tool_executions_session on rt_tool_executions (session_id);

-- A barge-in: when the caller started speaking, how long until the platform decided (detection) and until the
-- agent audio stopped (stop), and how many agent words the caller heard after starting to speak (bleed-through).
create table rt_interruptions (
  id bigint generated always as identity primary key,
  session_id text not null references rt_sessions(id) on delete cascade,
  developer_id text not null,
  agent_id text not null,
  turn_idx int not null,
  at_ms int not null,
  detection_ms int not null,
  stop_ms int not null,
  bleed_words int not null,
  reason text not null,
  created_at timestamptz not null default now()
);
create index rt_interruptions_agent on rt_interruptions (developer_id, agent_id, created_at);
create index rt_interruptions_session on rt_interruptions (session_id);

-- Outbound calls placed by the dispatcher (BullMQ job realtime.dial).
create table rt_outbound_tasks (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  agent_id text not null,
  session_id text references rt_sessions(id) on delete set null,
  from_number text not null,
  to_number text not null,
  status text not null default 'queued',
  call_sid text,
  error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
