-- Admission counts a developer's running sessions under a per-developer lock (shared/realtime/store.ts
-- admitSession): this keeps that count an index lookup however many sessions a developer has had.
create index rt_sessions_active on rt_sessions (developer_id) where status = 'active';
