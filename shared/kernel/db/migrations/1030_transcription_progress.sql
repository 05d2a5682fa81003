-- How far an async transcription has got: {"doneSeconds": n, "totalSeconds": n}, written by the job as it decodes
-- (a long recording on the local engine takes minutes) and shown on GET /v1/transcribe/:jobId.
alter table transcription_jobs add column progress jsonb;
