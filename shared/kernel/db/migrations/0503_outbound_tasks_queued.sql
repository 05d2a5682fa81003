-- The reconciler reads outbound calls not yet placed, oldest first, on every worker's tick.
create index rt_outbound_tasks_queued on rt_outbound_tasks (created_at) where status = 'queued' and call_sid is null;
