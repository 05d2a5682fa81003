-- Phone-ready agents (issue 22 items 1-2): what an agent does on an answering machine, its call-control tools,
-- and per call who answered (with when the beep came) and where it was transferred.
alter table agents add column voicemail jsonb, add column call_tools jsonb;

alter table rt_sessions
  add column answered_by text check (answered_by in ('human', 'machine', 'unknown')),
  add column beep_at_ms int,
  -- 'detector' (our own, from the call's audio) or 'twilio' (Twilio's async AMD callback): whichever came first.
  add column amd_source text,
  -- {target, to, mode, summary, atMs} once the agent handed the call to a person.
  add column transfer jsonb;

-- Template variables of an outbound call (the voicemail message's {{name}}) and where its events go.
alter table rt_outbound_tasks
  add column answered_by text,
  -- Twilio's own AnsweredBy (machine_end_beep, …): with DetectMessageEnd it also says the greeting has ended.
  add column amd_answered_by text,
  add column variables jsonb not null default '{}',
  add column webhook_url text;
