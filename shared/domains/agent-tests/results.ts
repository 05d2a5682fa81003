import type { Check, ScenarioResult } from '../../contracts/agent-tests.ts';

/** What an agent-test run reports (the contract's types): one check per expectation, with its reason. */
export type { Check, ScenarioResult, TurnResult, WaterfallTurn } from '../../contracts/agent-tests.ts';

/** Every check of a scenario, turn checks first. */
export function allChecks(r: ScenarioResult): Check[] {
  return [...r.turns.flatMap((t) => t.checks), ...r.checks];
}
