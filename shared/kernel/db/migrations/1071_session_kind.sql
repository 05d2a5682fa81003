-- A session's kind on the calls list, stored by what drove the call (a test's platform at the start, a campaign's
-- attempt, a replay's run) rather than looked up in their tables on every read; null: told by channel and
-- direction. Earlier sessions are labelled from the same evidence once.
alter table rt_sessions add column if not exists kind text check (kind in ('test', 'replay', 'campaign'));
update rt_sessions s set kind = case
    when exists (select 1 from call_replays r where r.replay_session_id = s.id and r.developer_id = s.developer_id)
      then 'replay'
    when exists (select 1 from credit_ledger l where l.request_id = s.id and l.developer_id = s.developer_id
                   and starts_with(l.provider, 'agent-test:'))
      then 'test'
    when exists (select 1 from campaign_calls c where c.session_id = s.id) then 'campaign'
  end
 where s.kind is null;
