import { readFile } from 'node:fs/promises';
import { parseScenarioFile, type Scenario, type TurnAudio } from '../../contracts/agent-tests.ts';
import { backchannelTrouble } from './backchannels.ts';
import type { ScenarioPlatform } from './platform-slot.ts';
import { allChecks, type ScenarioResult } from './results.ts';
import { runScenario } from './run-scenario.ts';
import type { Target } from './session-api.ts';

/** Reads and validates every scenario file before any call starts: a bad file fails the run at once. */
export async function loadScenarioFiles(files: string[]): Promise<{ file: string; scenario: Scenario }[]> {
  const out: { file: string; scenario: Scenario }[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    for (const scenario of parseScenarioFile(text, file)) out.push({ file, scenario });
  }
  return out;
}

/**
 * Runs scenarios one after another (the offline vendors follow one scenario at a time), each on the platform
 * `platformFor` gives it (of the scenario's kind: platform-slot.ts), and reports each as it finishes. Every scenario
 * runs even after a failure, so one report shows all of them. `as`: the developer's key and the agent called.
 */
export async function runSuite(
  as: Omit<Target, 'url'>,
  scenarios: { file: string; scenario: Scenario }[],
  platformFor: (scenario: Scenario) => Promise<ScenarioPlatform>,
  opts: {
    signal?: AbortSignal;
    onResult?: (r: ScenarioResult) => void;
    /** Fetches an audio turn's bytes; `file` is the scenario's source (a path names a file beside it). */
    loadAudio?: (audio: TurnAudio, file: string) => Promise<Buffer>;
    /**
     * How many times faster than real time the callers play the agent's audio (far-end.ts): 1 for every developer's
     * run; the platform's own tests ask for more where a scenario is not about timing (run-scenario.ts).
     */
    playout?: number;
  } = {},
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const { file, scenario } of scenarios) {
    if (opts.signal?.aborted) break;
    const load = opts.loadAudio;
    const on = await platformFor(scenario);
    const r = await runScenario({ ...as, url: on.url }, scenario, on, {
      file,
      signal: opts.signal,
      loadAudio: load && ((a) => load(a, file)),
      playout: opts.playout,
    });
    results.push(r);
    opts.onResult?.(r);
  }
  return results;
}

/** A human summary of one result, for the CLI's stderr. */
export function describeResult(r: ScenarioResult): string {
  const lines = [`${r.passed ? 'PASS' : 'FAIL'} ${r.file}: ${r.name}  (${r.mode}; stt: ${r.stt}; llm: ${r.llm})`];
  for (const c of allChecks(r)) lines.push(`  ${c.passed ? '✓' : '✗'} ${c.expectation}: ${c.reason}`);
  for (const why of r.rootCause) lines.push(`  ! root cause: ${why}`);
  const trouble = backchannelTrouble(r.backchannels);
  if (trouble) lines.push(`  ! backchannels: ${trouble}`);
  return lines.join('\n');
}
