-- Per-agent turn taking on voice sessions (endpointing windows, preemptive replies); null = the platform defaults.
alter table agents add column turn_taking jsonb;
