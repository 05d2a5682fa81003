-- Caller-supplied provider keys (X-Provider-Key-<Vendor> headers) of a video job. A job outlives its request, so
-- the worker can only use such a key if it is kept; it is kept sealed with the stored-provider-key cipher
-- (AES-256-GCM under PROVIDER_KEYS_ENCRYPTION_KEYS, additional data = owner, job and vendor, so a copy onto another
-- job or vendor does not open), apart from video_jobs so that no read of a job row ever carries it. Written in the
-- transaction that inserts the job; erased (the sealed columns set to null) in the one that moves it to completed
-- or failed. The erased row stays as a marker that the job ran on the caller's key for that vendor, so a late
-- duplicate run fails instead of falling back to a stored or platform key.
create table video_job_keys (
  job_id text not null references video_jobs(id) on delete cascade,
  vendor text not null,
  key_id text,
  iv bytea,
  ciphertext bytea,
  auth_tag bytea,
  created_at timestamptz not null default now(),
  erased_at timestamptz,
  primary key (job_id, vendor),
  check ((erased_at is null) = (ciphertext is not null and iv is not null and auth_tag is not null and key_id is not null))
);
