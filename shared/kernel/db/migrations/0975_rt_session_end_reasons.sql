-- Typed end reasons (issue 30 item 3): rt_sessions.end_reason takes only the values of SessionEndReason
-- (shared/kernel/contracts/end-reasons.ts; test/realtime/end-reasons.test.ts keeps this CHECK equal to that list).
-- Existing rows move to the typed names. The old `voicemail` said nothing of whether a message was left (campaign
-- settlement used to re-read the agent's current setting to tell): a voicemail session in which the agent spoke
-- left its message (a machine never hears the greeting; the message is the one thing said), one in which it did not
-- was hung up on; a session with no turns recorded at all is judged by the agent version it ran. Old values with no
-- typed counterpart become `error`, the old text kept in `error`.
-- Deploy: the realtime role writes the typed values from this release on; an older realtime process still running
-- after the migration would have its end refused by the CHECK, so roll the realtime role with the migration.

-- The mapping, kept as a function so a test can call it on old values (and the update below is rerunnable).
create or replace function rt_legacy_end_reason(old text, left_message boolean) returns text
language sql immutable as $$
  select case
    when old is null then null
    when old in ('caller-hangup', 'agent-ended', 'transferred', 'voicemail-left', 'voicemail-hung-up',
                 'max-duration', 'max-credits', 'daily-cap', 'balance', 'campaign-canceled', 'admission',
                 'start-failed', 'stream-never-connected', 'socket-closed', 'protocol-error', 'server-shutdown',
                 'worker-lost', 'error') then old
    when old = 'voicemail' then case when left_message then 'voicemail-left' else 'voicemail-hung-up' end
    when old in ('caller_hangup', 'client_stop') then 'caller-hangup'
    when old = 'agent_ended' then 'agent-ended'
    when old = 'max_duration' then 'max-duration'
    when old = 'socket_closed' then 'socket-closed'
    when old = 'server_shutdown' then 'server-shutdown'
    when old = 'worker_lost' then 'worker-lost'
    when old = 'start_failed' then 'start-failed'
    when old like 'protocol\_error%' then 'protocol-error'
    else 'error'
  end
$$;

update rt_sessions s
   set end_reason = m.reason,
       error = case when m.reason in ('error', 'protocol-error') and s.end_reason <> m.reason
                    then coalesce(s.error, 'ended with ' || s.end_reason) else s.error end
  from (
    select x.id, rt_legacy_end_reason(x.end_reason,
             case
               when exists (select 1 from rt_turns t where t.session_id = x.id and t.speaker = 'assistant'
                              and t.text <> '') then true
               when exists (select 1 from rt_turns t where t.session_id = x.id) then false
               else coalesce((select v.config -> 'voicemail' ->> 'action' = 'leave_message'
                                from agent_versions v
                               where v.developer_id = x.developer_id and v.agent_id = x.agent_id
                                 and v.version = x.agent_version), false)
             end) as reason
      from rt_sessions x
     where x.end_reason is not null
  ) m
 where m.id = s.id and m.reason is distinct from s.end_reason;

-- Expired sessions (the token was never claimed by a stream) say so from now on.
update rt_sessions set end_reason = 'stream-never-connected' where status = 'expired' and end_reason is null;

alter table rt_sessions add constraint rt_sessions_end_reason_check check (end_reason in (
  'caller-hangup', 'agent-ended', 'transferred', 'voicemail-left', 'voicemail-hung-up', 'max-duration',
  'max-credits', 'daily-cap', 'balance', 'campaign-canceled', 'admission', 'start-failed',
  'stream-never-connected', 'socket-closed', 'protocol-error', 'server-shutdown', 'worker-lost', 'error'));
