import type { Queryable } from '../../kernel/db/pool.ts';
import type { Scenario, ScenarioResult, TestMode, TestRunStatus } from '../../contracts/agent-tests.ts';

/** Every statement on `agent_test_runs` (the table's owner). */
export interface TestRunRow {
  id: string;
  developer_id: string;
  agent_id: string;
  status: TestRunStatus;
  mode: TestMode;
  version: number | null;
  scenarios: Scenario[];
  results: (ScenarioResult | null)[];
  total: number;
  done: number;
  passed: number;
  failed: number;
  error: string | null;
  webhook_url: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export async function insertTestRun(
  db: Queryable,
  run: {
    id: string;
    developerId: string;
    agentId: string;
    version: number | null;
    scenarios: Scenario[];
    webhookUrl: string | null;
    mode?: TestMode;
  },
): Promise<TestRunRow> {
  const { rows } = await db.query<TestRunRow>(
    `insert into agent_test_runs (id, developer_id, agent_id, version, scenarios, results, total, webhook_url, mode)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning *`,
    [
      run.id,
      run.developerId,
      run.agentId,
      run.version,
      JSON.stringify(run.scenarios),
      JSON.stringify(run.scenarios.map(() => null)),
      run.scenarios.length,
      run.webhookUrl,
      run.mode ?? 'offline',
    ],
  );
  return rows[0]!;
}

/** The run, only for its developer (another developer's run does not exist for them). */
export async function getTestRun(db: Queryable, developerId: string, id: string): Promise<TestRunRow | null> {
  const { rows } = await db.query<TestRunRow>(`select * from agent_test_runs where id = $1 and developer_id = $2`, [
    id,
    developerId,
  ]);
  return rows[0] ?? null;
}

export async function getTestRunById(db: Queryable, id: string): Promise<TestRunRow | null> {
  const { rows } = await db.query<TestRunRow>(`select * from agent_test_runs where id = $1`, [id]);
  return rows[0] ?? null;
}

/** One page of an agent's runs, newest first (without the heavy scenarios and results). */
export async function listTestRuns(
  db: Queryable,
  developerId: string,
  agentId: string,
  page: { after: string | null; limit: number },
): Promise<Omit<TestRunRow, 'scenarios' | 'results'>[]> {
  const { rows } = await db.query<Omit<TestRunRow, 'scenarios' | 'results'>>(
    `select id, developer_id, agent_id, status, mode, version, total, done, passed, failed, error, webhook_url,
            created_at, started_at, finished_at
       from agent_test_runs
      where developer_id = $1 and agent_id = $2 and ($3::text is null or id < $3)
      order by id desc limit $4`,
    [developerId, agentId, page.after, page.limit + 1],
  );
  return rows;
}

/**
 * queued → running (a retried attempt finds it running already and goes on), with the mode the run has now: the
 * agent's LLM is read again as the run starts (it may have changed since the run was asked for).
 */
export async function markTestRunStarted(db: Queryable, id: string, mode: TestMode): Promise<void> {
  await db.query(
    `update agent_test_runs set status = 'running', started_at = coalesce(started_at, now()), mode = $2
      where id = $1 and status in ('queued', 'running')`,
    [id, mode],
  );
}

/** Records one scenario's result at its index and counts it, once (a repeated write changes nothing). */
export async function recordScenarioResult(
  db: Queryable,
  id: string,
  index: number,
  result: ScenarioResult,
): Promise<void> {
  await db.query(
    `update agent_test_runs
        set results = jsonb_set(results, array[$2::text], $3::jsonb),
            done = done + 1,
            passed = passed + (case when $4 then 1 else 0 end),
            failed = failed + (case when $4 then 0 else 1 end)
      where id = $1 and results -> $2::int = 'null'::jsonb`,
    [id, index, JSON.stringify(result), result.passed],
  );
}

/** Ends the run: passed when every scenario passed, failed otherwise, error when it could not run at all. */
export async function finishTestRun(db: Queryable, id: string, error: string | null): Promise<TestRunRow | null> {
  const { rows } = await db.query<TestRunRow>(
    `update agent_test_runs
        set status = case when $2::text is not null then 'error'
                          when failed = 0 and done = total then 'passed' else 'failed' end,
            error = $2, finished_at = now()
      where id = $1 and status in ('queued', 'running') returning *`,
    [id, error],
  );
  return rows[0] ?? null;
}

/**
 * SQL expression: how many test runs of the developer `developerId` (an SQL expression) are open (queued or
 * running), for the in-flight limit counted in the creating transaction (limits.ts).
 */
export function openTestRunCountSql(developerId: string): string {
  return `(select count(*) from agent_test_runs where developer_id = ${developerId} and status in ('queued', 'running'))`;
}

/** Runs still open (queued or running) created more than `afterMs` ago: the reconciler checks their queue entry. */
export async function openTestRuns(db: Queryable, afterMs: number, limit = 100): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from agent_test_runs where status in ('queued', 'running')
        and created_at < now() - make_interval(secs => $1::float / 1000) order by id limit $2`,
    [afterMs, limit],
  );
  return rows.map((r) => r.id);
}
