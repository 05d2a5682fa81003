-- Video jobs: Postgres is the source of truth for their state; BullMQ (Redis) only carries the work. A job's
-- BullMQ id is its row id, so re-enqueueing (the reconciler after a Redis loss) is idempotent.
create table video_jobs (
  id text primary key,
  owner_id text not null references developers(id) on delete cascade,
  type text not null check (type in ('generate', 'avatar', 'lipsync', 'dub', 'analyze')),
  status text not null default 'pending' check (status in ('pending', 'processing', 'completed', 'failed')),
  provider text not null,
  -- Only ever rises (greatest()), so a retried attempt never moves it back.
  progress real not null default 0 check (progress >= 0 and progress <= 1),
  -- The validated request body (plus resolved defaults); workers read it from here, not from the queue payload.
  request jsonb not null,
  -- Intermediate artifacts of multi-step jobs (dub flow steps, fetched inputs), by step name.
  state jsonb not null default '{}'::jsonb,
  result jsonb,
  error jsonb,
  webhook_url text,
  -- False when the caller's own provider key serves the job: recorded, never charged.
  billable boolean not null default true,
  request_id text not null,
  attempts int not null default 0,
  gpu_seconds real not null default 0,
  -- Set in the transaction that completes the job; the charge is made once, by the worker that set it.
  charged_units real,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  completed_at timestamptz,
  updated_at timestamptz not null default now()
);
create index video_jobs_owner on video_jobs (owner_id, id desc);
create index video_jobs_open on video_jobs (updated_at) where status in ('pending', 'processing');

-- Webhook endpoints: one signing secret per (developer, address), created on first use and readable by its
-- developer (GET /v1/webhooks/secret?url=…). A 410 answer disables the endpoint.
create table webhook_endpoints (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  url text not null,
  secret text not null,
  disabled_at timestamptz,
  created_at timestamptz not null default now(),
  unique (developer_id, url)
);

-- One message per event (unique source): its id is the webhook-id every attempt carries, so receivers dedupe.
create table webhook_messages (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  endpoint_id text not null references webhook_endpoints(id) on delete cascade,
  source text not null unique,
  event_type text not null,
  body text not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts int not null default 0,
  next_attempt_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  delivered_at timestamptz
);
create index webhook_messages_pending on webhook_messages (next_attempt_at) where status = 'pending';

-- Every delivery attempt, successful or not.
create table webhook_deliveries (
  id text primary key,
  message_id text not null references webhook_messages(id) on delete cascade,
  attempt int not null,
  status_code int,
  error text,
  duration_ms int not null,
  created_at timestamptz not null default now(),
  unique (message_id, attempt)
);
