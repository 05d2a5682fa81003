-- Post-call analysis and messages taken on calls (issue #33).
-- agents.analysis: what to work out of a finished call (summary, structured data by JSON Schema, success criteria);
-- null: none. Snapshotted into agent_versions like every column (0901's trigger takes the whole row).
alter table agents add column analysis jsonb;
-- rt_sessions.analysis: the stored result (written once: the job's update is conditional on it being null).
-- rt_sessions.taken_message: what a caller left with the take_message tool (the last one, if several).
-- rt_sessions.webhook_url: where this call's events go when the session was created with one (inbound, direct);
-- outbound tasks and campaigns keep their own.
alter table rt_sessions
  add column analysis jsonb,
  add column taken_message jsonb,
  add column webhook_url text;
