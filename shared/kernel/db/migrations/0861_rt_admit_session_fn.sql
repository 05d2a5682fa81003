-- Admission of a realtime session in one round trip (shared/domains/realtime/store.ts admitSession). The claim and
-- the per-developer cap were a client-side transaction holding a per-developer advisory lock across five round
-- trips; under load every connect of one developer queued behind the others' round trips while each held a pool
-- connection (300 calls: greeting p95 26 s). Here the lock is held only while the server runs these statements.
-- Each statement of a volatile plpgsql function reads a fresh snapshot, so the count after the lock sees the
-- session admitted just before it.
create or replace function rt_admit_session(
  p_id text, p_developer text, p_agent text, p_channel text, p_claim boolean,
  p_call_sid text, p_stream_sid text, p_max int
) returns text language plpgsql volatile as $$
declare
  active int;
begin
  perform pg_advisory_xact_lock(hashtext('rt_sessions:' || p_developer));
  if p_claim then
    perform 1 from rt_sessions
      where id = p_id and developer_id = p_developer and agent_id = p_agent and channel = p_channel
        and status = 'pending' and expires_at > now();
    if not found then
      return 'used';
    end if;
  end if;
  select count(*) into active from rt_sessions where developer_id = p_developer and status = 'active';
  if active >= p_max then
    return 'limit';
  end if;
  if p_claim then
    update rt_sessions set status = 'active', call_sid = p_call_sid, stream_sid = p_stream_sid, heartbeat_at = now()
      where id = p_id and status = 'pending';
  else
    insert into rt_sessions (id, developer_id, agent_id, channel, status, heartbeat_at)
      values (p_id, p_developer, p_agent, p_channel, 'active', now());
  end if;
  return 'admitted';
end
$$;
