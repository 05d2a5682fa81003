import { pct } from './script.ts';

/** What the platform process reports when it stops (server.ts). */
export interface Final {
  cpu: { user: number; system: number; processes: number };
  sessions: number;
  prepared: number;
  dropped: number;
  droppedLlmTokens: number;
  droppedTtsChars: number;
  llmTokens: number;
  /** Why prepared replies were dropped (issue 25). */
  droppedBy?: { wentOn: number; wordsChanged: number; finalDiffers: number };
}

export interface Report {
  header: string[];
  calls: number;
  failures: number;
  vendorTts: boolean;
  rows: Array<[name: string, xs: number[], target?: string]>;
  pauses: number;
  cutIns: number;
  firstResponse: number[];
  turn: number[];
  final: Final | null;
}

const f = (v: number) => (Number.isFinite(v) ? `${Math.round(v)}` : '-');
const mark = (ok: boolean) => (ok ? '✔' : '✘');

/** The latency table, then the new figures (false cut-ins, preemptive replies, CPU) each next to its target. */
export function printReport(r: Report): void {
  for (const line of r.header) console.log(line);
  console.log(`${'metric (ms)'.padEnd(44)} ${'p50'.padStart(7)} ${'p95'.padStart(7)} ${'n'.padStart(6)}  target`);
  for (const [name, xs, target = ''] of r.rows)
    console.log(
      `${name.padEnd(44)} ${f(pct(xs, 50)).padStart(7)} ${f(pct(xs, 95)).padStart(7)} ${String(xs.length).padStart(6)}  ${target}`,
    );

  const cutPct = r.pauses ? (100 * r.cutIns) / r.pauses : 0;
  const fin = r.final;
  const perCall = (s: number) => (fin ? `${((1000 * s) / Math.max(1, r.calls)).toFixed(0)} ms` : '-');
  console.log('');
  console.log(
    `false cut-ins (agent spoke while the caller only paused): ${r.cutIns} of ${r.pauses} pauses (${cutPct.toFixed(1)} %)`,
  );
  if (fin) {
    console.log(
      `preemptive replies: ${fin.prepared} played, ${fin.dropped} dropped; dropped LLM output ≈ ${fin.droppedLlmTokens} tokens ` +
        `(billed LLM tokens ${fin.llmTokens}); dropped TTS ${fin.droppedTtsChars} characters` +
        (fin.droppedBy
          ? `; dropped because the caller went on ${fin.droppedBy.wentOn}, newer words ${fin.droppedBy.wordsChanged}, ` +
            `the final differed ${fin.droppedBy.finalDiffers}`
          : ''),
    );
    console.log(
      `platform CPU per call (${fin.cpu.processes} processes at the end): user ${perCall(fin.cpu.user)}, system ${perCall(fin.cpu.system)} ` +
        `(total user ${fin.cpu.user.toFixed(1)} s, system ${fin.cpu.system.toFixed(1)} s, system share ` +
        `${((100 * fin.cpu.system) / Math.max(0.001, fin.cpu.user + fin.cpu.system)).toFixed(0)} %)`,
    );
  }

  // The targets: each one is for a given call count; figures of other runs are shown without a verdict.
  const fr95 = pct(r.firstResponse, 95);
  const turn95 = pct(r.turn, 95);
  const held = r.failures === 0 && fr95 < 1500 && turn95 < 900;
  const targets: Array<[string, string, string, boolean | null]> = [
    ['failed calls at 50 calls', String(r.failures), '0', r.calls === 50 ? r.failures === 0 : null],
    ['turn p95 at 50 calls', `${f(turn95)} ms`, '≤ 450 ms', r.calls === 50 ? turn95 <= 450 : null],
    ['first response p95 at 50 calls', `${f(fr95)} ms`, '≤ 600 ms', r.calls === 50 ? fr95 <= 600 : null],
    ['false cut-ins', `${cutPct.toFixed(1)} % of ${r.pauses}`, '≤ 2 % of pauses', r.pauses ? cutPct <= 2 : null],
    [
      'turn p95 at 100 calls, local TTS',
      `${f(turn95)} ms`,
      '≤ 900 ms',
      r.calls === 100 && !r.vendorTts ? turn95 <= 900 : null,
    ],
    [
      'calls held within the contract (vendor TTS)',
      held ? `${r.calls} held` : `not held at ${r.calls}`,
      '≥ 200 calls',
      r.vendorTts && r.calls >= 200 ? held : r.vendorTts && !held ? false : null,
    ],
  ];
  console.log(`\n${'target'.padEnd(46)} ${'this run'.padEnd(22)} ${'target'.padEnd(16)} verdict`);
  for (const [name, value, target, ok] of targets)
    console.log(
      `${name.padEnd(46)} ${value.padEnd(22)} ${target.padEnd(16)} ${ok === null ? '(other call count)' : mark(ok)}`,
    );
}
