-- Spending: why usage was waived, which API key spent it, caps per call and per day.

-- Credits of actual usage a hard-limit balance could not cover are recorded in credits_waived; the reason says why
-- (`balance`: the work was already done when the balance ran out). Never waived silently.
alter table credit_ledger add column waived_reason text;
-- The API key that started the metered work, where known (a voice session records the key that created it), so a
-- daily cap per key can count that key's spend.
alter table credit_ledger add column api_key_id text;
create index credit_ledger_key_created on credit_ledger (api_key_id, created_at) where api_key_id is not null;

-- Daily spending caps in credits per UTC day: one per developer (api_key_id = '') and one per API key.
create table spending_caps (
  developer_id text not null references developers(id) on delete cascade,
  api_key_id text not null default '',
  daily_credits bigint not null check (daily_credits >= 0),
  updated_at timestamptz not null default now(),
  primary key (developer_id, api_key_id)
);

-- The limits a voice session was created with (the session-create body over the agent's defaults) and the key
-- that created it; read when the call connects.
create table session_limits (
  session_id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  api_key_id text,
  max_duration_seconds int check (max_duration_seconds > 0),
  max_credits bigint check (max_credits > 0),
  created_at timestamptz not null default now()
);

-- Per-call defaults on the agent (null = no cap beyond the platform's REALTIME_MAX_SESSION_SECONDS) and the
-- sentence it says when a cap or the balance ends a call (null = the platform's default goodbye).
alter table agents add column max_duration_seconds int check (max_duration_seconds > 0);
alter table agents add column max_credits bigint check (max_credits > 0);
alter table agents add column goodbye_message text;
