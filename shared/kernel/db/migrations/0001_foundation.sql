create extension if not exists vector;

-- A developer is the tenant: every resource belongs to one.
create table developers (
  id text primary key,
  name text not null,
  tier text not null default 'starter',
  created_at timestamptz not null default now()
);

create table api_keys (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  name text not null,
  prefix text not null,
  -- SHA-256 of the raw key: keys are 190+ bits of randomness, so a fast hash is safe and lookups stay O(1).
  key_hash bytea not null unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz,
  revoked_reason text check (revoked_reason in ('revoked', 'rotated')),
  replaced_by text references api_keys(id)
);
create index api_keys_developer_active on api_keys (developer_id, id desc) where revoked_at is null;

-- Idempotency-Key records: the first response is replayed for 24 h.
create table idempotency_keys (
  developer_id text not null references developers(id) on delete cascade,
  key text not null,
  method text not null,
  path text not null,
  request_hash text not null,
  state text not null check (state in ('in_progress', 'done')),
  response_status int,
  response_headers jsonb,
  response_body bytea,
  created_at timestamptz not null default now(),
  primary key (developer_id, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);
