/**
 * `--sweep`: the issue-25 table. One full benchmark run (its own platform, doubles and callers) per profile, STT
 * final delay × LLM first token, one after the other, with every other option passed through (calls, turns,
 * `--stt-wer`, `--stt-jitter-ms`, `--stt-interim-lag-ms`, `--tts`…). Each run prints one summary line that this
 * reads; the table and each profile's verdict against the issue's targets come at the end.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { pct } from './script.ts';

export const SUMMARY_PREFIX = 'voice-latency-summary ';

/** What one run reports to the sweep. */
export interface SweepSummary {
  failures: number;
  turn: number[];
  firstResponse: number[];
  endpoint: number[];
  pauses: number;
  cutIns: number;
  prepared: number | null;
  dropped: number | null;
  droppedLlmTokens: number | null;
}

const OWN = new Set(['--sweep', '--sweep-stt-ms', '--sweep-llm-ms', '--stt-final-ms', '--llm-first-token-ms']);

/** The run's arguments without the sweep's own (and the two it sets per profile). */
function passThrough(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const name = a.split('=')[0]!;
    if (!OWN.has(name)) {
      out.push(a);
      continue;
    }
    if (name !== '--sweep' && !a.includes('=')) i++; // skip the value
  }
  return out;
}

function oneRun(args: string[]): Promise<SweepSummary | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'benchmarks/voice-latency/run.ts', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let summary: SweepSummary | null = null;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith(SUMMARY_PREFIX)) summary = JSON.parse(line.slice(SUMMARY_PREFIX.length)) as SweepSummary;
      else process.stdout.write(line + '\n');
    });
    child.on('exit', () => resolve(summary));
  });
}

/** The issue's turn-p95 target for a profile (LLM first token 250 ms), if it has one. */
function turnTarget(stt: number, llm: number): number | null {
  if (llm !== 250) return null;
  return stt === 150 ? 450 : stt === 300 ? 700 : stt === 500 ? 900 : null;
}

export async function runSweep(argv: string[], sttList: string, llmList: string): Promise<void> {
  const stts = sttList.split(',').map(Number);
  const llms = llmList.split(',').map(Number);
  const base = passThrough(argv);
  const rows: string[] = [];
  for (const llm of llms) {
    for (const stt of stts) {
      const load0 = loadavg()[0]!.toFixed(1);
      console.log(`\n=== sweep: STT final ${stt} ms, LLM first token ${llm} ms (load ${load0}) ===`);
      const r = await oneRun([...base, '--stt-final-ms', String(stt), '--llm-first-token-ms', String(llm)]);
      const load1 = loadavg()[0]!.toFixed(1);
      if (!r) {
        rows.push(`| ${stt} ms | ${llm} ms | run failed | | | | | load ${load0} → ${load1} |`);
        continue;
      }
      const cut = r.pauses ? (100 * r.cutIns) / r.pauses : 0;
      const target = turnTarget(stt, llm);
      const p95 = pct(r.turn, 95);
      const ok = r.failures === 0 && cut <= 2 && (target === null || p95 <= target);
      const ms = (v: number) => (Number.isFinite(v) ? String(Math.round(v)) : '-');
      rows.push(
        `| ${stt} ms | ${llm} ms | ${ms(pct(r.turn, 50))} / ${ms(p95)} ms${target ? ` (≤ ${target})` : ''} | ` +
          `${ms(pct(r.firstResponse, 95))} ms | ${ms(pct(r.endpoint, 50))} / ${ms(pct(r.endpoint, 95))} ms | ` +
          `${cut.toFixed(1)} % (${r.cutIns} of ${r.pauses}) | ${r.failures} | ` +
          `${r.prepared ?? '-'} / ${r.dropped ?? '-'}, ≈ ${r.droppedLlmTokens ?? '-'} tokens | load ${load0} → ${load1} | ${ok ? '✔' : '✘'} |`,
      );
    }
  }
  console.log(`\nvoice-latency sweep (${base.join(' ') || 'defaults'})\n`);
  console.log(
    '| STT final | LLM first token | turn p50 / p95 | first response p95 | endpointing wait p50 / p95 | false cut-ins | failed calls | prepared played / dropped, dropped LLM output | load average | targets |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}
