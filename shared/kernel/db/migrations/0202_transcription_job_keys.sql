-- The caller's provider key (X-Provider-Key-<Vendor> header) of an asynchronous transcription, kept the way
-- video_job_keys keeps a video job's (0602): the job outlives its request, so the worker can only use the key if
-- it is kept, sealed with the stored-provider-key cipher (additional data = developer, job and vendor), apart from
-- transcription_jobs so no read of a job row carries it. Written in the transaction that inserts the job, erased
-- (sealed columns set to null) in the statement that finishes it; the erased row marks that the job ran on the
-- caller's key, so a late duplicate run fails instead of falling back to a stored or platform key.
create table transcription_job_keys (
  job_id text primary key references transcription_jobs(id) on delete cascade,
  vendor text not null,
  key_id text,
  iv bytea,
  ciphertext bytea,
  auth_tag bytea,
  created_at timestamptz not null default now(),
  erased_at timestamptz,
  check ((erased_at is null) = (ciphertext is not null and iv is not null and auth_tag is not null and key_id is not null))
);
