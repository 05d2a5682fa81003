-- Caller-audio settings of an agent (issue 30: the input processors applied before the VAD and STT); null = none.
alter table agents add column audio jsonb;
