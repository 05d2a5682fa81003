-- Outbound calling campaigns (POST /v1/campaigns). Postgres is the source of truth: the dispatcher claims a
-- recipient (and inserts its call attempt) in one transaction before dialling, so a restart loses no recipient and
-- a claimed attempt is dialled at most once (docs/campaigns.md). SQL only in shared/campaigns/store.ts.
create table campaigns (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  agent_id text not null,
  name text,
  from_number text not null,
  status text not null default 'active' check (status in ('active', 'paused', 'canceled', 'completed')),
  max_concurrency int not null check (max_concurrency between 1 and 1000),
  -- Calling hours, local time of each recipient ('HH:MM'); end before start spans midnight.
  hours_start text not null,
  hours_end text not null,
  time_zone text not null,
  retry_max_attempts int not null,
  retry_backoff_seconds int not null,
  retry_on text[] not null,
  max_duration_seconds int,
  max_credits numeric,
  webhook_url text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  completed_at timestamptz
);
create index campaigns_page on campaigns (developer_id, id desc);
create index campaigns_open on campaigns (status) where status = 'active';

create table campaign_recipients (
  id text primary key,
  campaign_id text not null references campaigns(id) on delete cascade,
  idx int not null,
  phone text not null,
  variables jsonb not null default '{}',
  time_zone text,
  -- pending: waits for a slot (next_attempt_at); calling: an attempt is in flight; done: outcome is final.
  state text not null default 'pending' check (state in ('pending', 'calling', 'done')),
  outcome text,
  outcome_reason text,
  attempts int not null default 0,
  next_attempt_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (campaign_id, idx)
);
create index campaign_recipients_due on campaign_recipients (campaign_id, next_attempt_at) where state = 'pending';
create index campaign_recipients_calling on campaign_recipients (campaign_id) where state = 'calling';

-- One row per dial attempt. status follows Twilio's CallStatus once dialled; `claimed` = not dialled yet,
-- `dialing` = the POST to Twilio may have been sent (recovery looks the call up before dialling again).
create table campaign_calls (
  id text primary key,
  campaign_id text not null references campaigns(id) on delete cascade,
  recipient_id text not null references campaign_recipients(id) on delete cascade,
  attempt int not null,
  status text not null default 'claimed',
  call_sid text,
  session_id text,
  answered_by text,
  outcome text,
  error text,
  claimed_at timestamptz not null default now(),
  dialed_at timestamptz,
  ended_at timestamptz,
  settled_at timestamptz,
  unique (recipient_id, attempt)
);
create index campaign_calls_open on campaign_calls (status, claimed_at) where settled_at is null;
create unique index campaign_calls_sid on campaign_calls (call_sid) where call_sid is not null;
