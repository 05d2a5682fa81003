-- A job's hold has a key (the job's kind and id), so however often a job runs it holds and settles once: reserve
-- with a key that already holds returns that hold. A refunded hold frees its key (a retry of a failed attempt
-- holds again).
alter table credit_ledger add column hold_key text;
create unique index credit_ledger_hold_key on credit_ledger (hold_key) where hold_key is not null and status <> 'refunded';
-- The hold sweeper reads holds still reserved, oldest first; the job charge check reads a job's rows by id.
create index credit_ledger_reserved on credit_ledger (created_at) where status = 'reserved';
create index credit_ledger_request on credit_ledger (request_id);
