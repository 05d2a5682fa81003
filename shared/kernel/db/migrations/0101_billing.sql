-- Credits: one account row per developer holds the current period's balance. Deduction is one conditional
-- UPDATE on this row, so concurrent charges serialise on its row lock and never spend past the limit.
create table credit_accounts (
  developer_id text primary key references developers(id) on delete cascade,
  -- Periods are whole months from the anchor (period k = anchor + k months).
  cycle_anchor timestamptz not null,
  period_index int not null default 0,
  period_start timestamptz not null,
  period_end timestamptz not null,
  monthly_credits bigint not null,
  carryover_credits bigint not null default 0,
  -- USD per 1,000 credits beyond the limit; 0 = hard limit.
  overage_rate numeric not null default 0,
  carryover_months int not null default 0,
  used bigint not null default 0 check (used >= 0),
  -- Incremented on every change: caches of the balance keep only the newest revision.
  rev bigint not null default 0,
  updated_at timestamptz not null default now()
);

-- Every metered operation, billable or not (a caller's own provider key is recorded with 0 credits).
create table credit_ledger (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  period_start timestamptz,
  category text not null check (category in ('tts', 'stt', 'llm', 'rag', 'video', 'session')),
  operation text not null,
  units numeric not null default 0,
  unit text not null,
  credits bigint not null default 0,
  -- Credits of actual usage that a hard-limit balance could not cover at commit (recorded, never charged).
  credits_waived bigint not null default 0,
  provider text not null,
  billable boolean not null,
  request_id text not null,
  status text not null check (status in ('reserved', 'committed', 'refunded')),
  created_at timestamptz not null default now(),
  settled_at timestamptz
);
-- The usage report sums the current period by creation time.
create index credit_ledger_developer_created on credit_ledger (developer_id, created_at);

-- Stored provider keys, encrypted with AES-256-GCM under a master key named by key_id (rotatable).
create table provider_keys (
  developer_id text not null references developers(id) on delete cascade,
  provider text not null,
  key_id text not null,
  iv bytea not null,
  ciphertext bytea not null,
  auth_tag bytea not null,
  last_four text not null,
  created_at timestamptz not null default now(),
  verified_at timestamptz,
  primary key (developer_id, provider)
);

-- Stripe: the customer of a developer (created once, reused) and the subscription state from webhooks.
create table billing_customers (
  developer_id text primary key references developers(id) on delete cascade,
  stripe_customer_id text not null unique,
  stripe_subscription_id text,
  subscription_status text,
  tier_expires_at timestamptz,
  -- Created time of the Stripe event that last set the subscription state: older events are ignored.
  state_event_created bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- Stripe webhook events already processed (idempotency on the event id).
create table stripe_events (
  id text primary key,
  type text not null,
  created bigint not null,
  received_at timestamptz not null default now()
);
