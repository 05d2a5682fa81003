-- Agent test runs (POST /v1/agents/:id/tests, docs/agent-tests.md). Postgres is the source of truth: the run's
-- scenarios, its status and progress, and each scenario's result as it finishes (so a worker that dies mid-run
-- resumes after the last finished scenario). SQL only in shared/domains/agent-tests/store.ts.
create table agent_test_runs (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  agent_id text not null,
  status text not null default 'queued' check (status in ('queued', 'running', 'passed', 'failed', 'error')),
  mode text not null default 'offline' check (mode in ('offline')),
  version int,
  scenarios jsonb not null,
  -- One entry per scenario, in order: null until it finishes, then its result.
  results jsonb not null,
  total int not null,
  done int not null default 0,
  passed int not null default 0,
  failed int not null default 0,
  error text,
  webhook_url text,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz
);
create index agent_test_runs_page on agent_test_runs (developer_id, agent_id, id desc);
create index agent_test_runs_open on agent_test_runs (status) where status in ('queued', 'running');
