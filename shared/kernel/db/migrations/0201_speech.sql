-- Asynchronous transcriptions (POST /v1/transcribe/async). The row is the source of truth: the queue payload is
-- only the id, so a job re-run after a crash reads its input (an uploaded S3 object or the caller's URL) from here.
create table transcription_jobs (
  id text primary key,
  developer_id text not null references developers(id) on delete cascade,
  status text not null check (status in ('processing', 'completed', 'failed')),
  provider text not null,
  options jsonb not null,
  -- {"kind": "upload", "key": "<s3 key>"} or {"kind": "url", "url": "..."}
  source jsonb not null,
  result jsonb,
  error jsonb,
  audio_seconds double precision,
  request_id text,
  created_at timestamptz not null default now(),
  completed_at timestamptz
);
create index transcription_jobs_developer on transcription_jobs (developer_id, id desc);
