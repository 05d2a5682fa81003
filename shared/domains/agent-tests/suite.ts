import { readFile } from 'node:fs/promises';
import { parseScenarioFile, type Scenario, type TurnAudio } from '../../kernel/contracts/agent-tests.ts';
import { backchannelTrouble } from './backchannels.ts';
import type { OfflineVendors } from './offline-vendors.ts';
import { allChecks, type ScenarioResult } from './results.ts';
import { runScenario, type Target } from './run-scenario.ts';

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
 * Runs scenarios one after another (the offline vendors follow one scenario at a time) and reports each as it
 * finishes. Every scenario runs even after a failure, so one report shows all of them.
 */
export async function runSuite(
  target: Target,
  scenarios: { file: string; scenario: Scenario }[],
  vendors: OfflineVendors,
  opts: {
    signal?: AbortSignal;
    onResult?: (r: ScenarioResult) => void;
    /** Fetches an audio turn's bytes; `file` is the scenario's source (a path names a file beside it). */
    loadAudio?: (audio: TurnAudio, file: string) => Promise<Buffer>;
  } = {},
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const { file, scenario } of scenarios) {
    if (opts.signal?.aborted) break;
    const load = opts.loadAudio;
    const r = await runScenario(target, scenario, vendors, {
      file,
      signal: opts.signal,
      loadAudio: load && ((a) => load(a, file)),
    });
    results.push(r);
    opts.onResult?.(r);
  }
  return results;
}

/** A human summary of one result, for the CLI's stderr. */
export function describeResult(r: ScenarioResult): string {
  const lines = [`${r.passed ? 'PASS' : 'FAIL'} ${r.file}: ${r.name}  (stt: ${r.stt}; llm: ${r.llm})`];
  for (const c of allChecks(r)) lines.push(`  ${c.passed ? '✓' : '✗'} ${c.expectation}: ${c.reason}`);
  const trouble = backchannelTrouble(r.backchannels);
  if (trouble) lines.push(`  ! backchannels: ${trouble}`);
  return lines.join('\n');
}
