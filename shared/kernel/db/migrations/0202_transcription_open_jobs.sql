-- The reconciler reads accepted transcription jobs still processing, oldest first, on every worker's tick.
create index transcription_jobs_open on transcription_jobs (created_at) where status = 'processing';
