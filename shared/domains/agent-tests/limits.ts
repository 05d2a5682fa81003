import type { Config } from '../../kernel/config/index.ts';
import type { Scenario, ScenarioTurn } from '../../contracts/agent-tests.ts';
import { getDeveloper } from '../../kernel/db/developers.ts';
import { withTransaction, type Db, type Queryable } from '../../kernel/db/pool.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { openCallReplayCountSql } from './replay/store.ts';
import { openTestRunCountSql } from './store.ts';

/**
 * What one developer may ask of the test pool (queue `cpu-tests`), so that no one occupies it:
 * - at most AGENT_TESTS_IN_FLIGHT_PER_DEVELOPER (by tier) test runs and call replays queued or running together;
 * - at most AGENT_TESTS_MAX_CALL_MINUTES of call time in one run: its scenarios' budget is checked when the run is
 *   asked for, and the calls it really makes are counted as it runs.
 */

/** Seconds a developer over the in-flight limit is told to wait: a short run takes about this long. */
export const IN_FLIGHT_RETRY_AFTER_S = 30;

/** The developer's in-flight limit, from their tier (an unknown tier gets the starter's). */
export function inFlightLimit(config: Config, tier: string | undefined): number {
  const caps = config.agentTestsInFlightPerDeveloper;
  return caps[tier ?? 'starter'] ?? caps.starter ?? 2;
}

/**
 * Inserts a test run or a replay (`insert`, given the transaction) only while the developer has fewer than their
 * limit open; otherwise 429 `test_runs_in_flight_limited` with Retry-After. The count and the insert are in one
 * transaction that holds a lock of the developer's own (an advisory lock, so no table row is locked): two requests
 * at once are counted one after the other, and cannot both take the last place.
 */
export async function insertWithinInFlightLimit<T>(
  db: Db,
  config: Config,
  developerId: string,
  insert: (tx: Queryable) => Promise<T>,
): Promise<T> {
  const limit = inFlightLimit(config, (await getDeveloper(db, developerId))?.tier);
  return withTransaction(db, async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(hashtextextended('agent-tests-in-flight:' || $1, 0))`, [developerId]);
    const { rows } = await tx.query<{ open: number }>(
      `select (${openTestRunCountSql('$1')} + ${openCallReplayCountSql('$1')})::int as open`,
      [developerId],
    );
    if ((rows[0]?.open ?? 0) >= limit) {
      throw new ApiError('test_runs_in_flight_limited', { limit, retryAfter: IN_FLIGHT_RETRY_AFTER_S }, null, {
        'retry-after': String(IN_FLIGHT_RETRY_AFTER_S),
      });
    }
    return insert(tx);
  });
}

/**
 * Upper bound of a scenario's call time, ms: the greeting, then per turn the silence before it, the caller's
 * speech (a `say` turn at flite's pace, 80 ms a character, with its pauses; an audio turn its cut, or a minute
 * when its length is not given), a barge-in's wait, and the reply (REPLY_ALLOWANCE_MS). Real replies are shorter;
 * this is the budget the cap is checked against before anything runs.
 */
const GREETING_ALLOWANCE_MS = 10_000;
const REPLY_ALLOWANCE_MS = 10_000;
const SAY_MS_PER_CHAR = 80;
const AUDIO_UNKNOWN_MS = 60_000;

function turnBudgetMs(t: ScenarioTurn): number {
  let speech = 0;
  if (t.say !== undefined) {
    speech = t.say.length * SAY_MS_PER_CHAR + Object.values(t.pauseAfterWords ?? {}).reduce((a, b) => a + b, 0);
  } else if (t.audio) {
    const { startMs, endMs } = t.audio;
    speech = endMs !== undefined ? endMs - (startMs ?? 0) : AUDIO_UNKNOWN_MS;
  }
  return (t.silenceBeforeMs ?? 0) + (t.bargeInAfterMs ?? 0) + speech + REPLY_ALLOWANCE_MS;
}

export function scenarioBudgetMs(s: Scenario): number {
  return GREETING_ALLOWANCE_MS + s.turns.reduce((n, t) => n + turnBudgetMs(t), 0);
}

export function maxRunCallMs(config: Config): number {
  return config.AGENT_TESTS_MAX_CALL_MINUTES * 60_000;
}

/** 400 when the scenarios' call budget is above AGENT_TESTS_MAX_CALL_MINUTES (nothing of the input is echoed). */
export function assertRunCallBudget(config: Config, scenarios: Scenario[]): void {
  const budget = scenarios.reduce((n, s) => n + scenarioBudgetMs(s), 0);
  if (budget <= maxRunCallMs(config)) return;
  throw new ApiError(
    'validation_failed',
    {
      detail:
        `these scenarios may take up to ${Math.ceil(budget / 60_000)} minutes of calls, more than the ` +
        `${config.AGENT_TESTS_MAX_CALL_MINUTES} one run may take; split them into several runs, or shorten their ` +
        'silences and turns',
    },
    'scenarios',
  );
}
