-- Developer portal: sign-in by phone one-time code. A phone belongs to at most one developer.
alter table developers add column phone text unique;

-- Portal sessions, server-side: the cookie carries a random id and this table holds only its SHA-256, so a copy of
-- the table signs no one in. developer_id is null while a verified phone that belongs to no developer has not yet
-- given a name (the sign-up step). Expiry (idle and absolute) is checked against the configured limits on read.
create table portal_sessions (
  id_hash bytea primary key,
  developer_id text references developers(id) on delete cascade,
  phone text not null,
  csrf_token text not null,
  created_at timestamptz not null,
  last_seen_at timestamptz not null
);
create index portal_sessions_developer on portal_sessions (developer_id);
create index portal_sessions_last_seen on portal_sessions (last_seen_at);

-- Server-generated portal settings, e.g. the OTP HMAC secret when PORTAL_SECRET is unset (made once, shared by
-- every process).
create table portal_settings (
  name text primary key,
  value text not null,
  created_at timestamptz not null default now()
);
