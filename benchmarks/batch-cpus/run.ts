import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { resolveBatchCpus, type CpuPinning } from '../../shared/kernel/process/cpu-affinity.ts';
import { startSpawner } from '../../shared/kernel/process/spawner.ts';
import { numbersText } from '../../support/abuse/hostile-tenant.ts';
import { ADMIN_URL } from '../../support/helpers/db.ts';

/**
 * What the batch flite pool's CPU placement (SPEECH_LOCAL_BATCH_CPUS, shared/kernel/process/cpu-affinity.ts) does
 * for a query's round trip to Postgres while developers' legal syntheses keep the batch pool busy (issue #35: the
 * victim's `GET /v1/agents` p99 went 7 → 43 ms in its handler, the query, on a quiet 2-core machine).
 *
 * This process plays the platform: it queries Postgres (a small catalog read, like the agents list) every
 * `--every` ms, one at a time, and times each round trip, while `--clients` clients synthesize 100 characters of
 * four-digit numbers in flite-slt back to back on a LocalTtsEngine's batch pool (nice 10, as the platform's).
 * Three modes, each a slice of `--slice` seconds, in rotated order over `--rounds` rounds so that the machine's
 * other load falls on each alike: `quiet` (no synthesis), `loose` (the batch workers on any cpu) and `pinned` (on the
 * cpus SPEECH_LOCAL_BATCH_CPUS's default chooses here). Each slice starts a fresh engine and closes it at its end
 * (its workers killed), so no slice's synthesis runs into the next. Prints per mode the round trip's p50/p95/p99,
 * the pieces synthesized per second, and the machine's busy cores and load average.
 *
 * Usage: `npx tsx benchmarks/batch-cpus/run.ts [--rounds 4] [--slice 15] [--clients 2] [--every 20]`.
 */
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const rounds = arg('rounds', 4);
const sliceS = arg('slice', 15);
const clients = arg('clients', 2);
const everyMs = arg('every', 20);

type Mode = 'quiet' | 'loose' | 'pinned' | 'single';
const choice = resolveBatchCpus('');
if (!choice.pinning) {
  console.log(`nothing to compare: ${choice.reason}`);
  process.exit(0);
}
const pinning: CpuPinning = choice.pinning;

startSpawner();
const db = new pg.Client({ connectionString: ADMIN_URL });
await db.connect();
const TEXT = numbersText(100);

/** Busy and total jiffies of the whole machine, from /proc/stat's first line. */
function cpuTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + f[4]!;
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** CPU seconds (user + system) of the given processes so far, from /proc/<pid>/stat; an exited one counts 0. */
function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // exited
    }
  }
  return ticks / 100;
}

interface Slice {
  rtt: number[];
  pieces: number;
  /** Cores the batch workers used over the slice. */
  batchCores: number;
  busyCores: number;
  load: number;
}

async function slice(mode: Mode): Promise<Slice> {
  const engine =
    mode === 'quiet'
      ? null
      : new LocalTtsEngine({
          batchCpus: mode === 'pinned' ? pinning : null,
          // `single`: one batch worker on any cpu, so the batch work takes one core at most without a placement.
          fliteWorkers: mode === 'single' ? 1 : undefined,
        });
  const stop = new AbortController();
  let pieces = 0;
  const synth = async () => {
    while (engine && !stop.signal.aborted) {
      try {
        const audio = await engine.synthesize({
          text: TEXT,
          voiceId: 'flite-slt',
          speed: 1,
          pitch: 1,
          owner: { tenant: 'abuser' },
          signal: stop.signal,
        });
        for await (const _ of audio.chunks);
        pieces++;
      } catch {
        // Aborted at the slice's end.
      }
    }
  };
  const loops = Array.from({ length: engine ? clients : 0 }, synth);
  // Let the workers start and the load settle before the round trips are counted.
  await new Promise((r) => setTimeout(r, 2000));
  pieces = 0;
  const rtt: number[] = [];
  const t0 = cpuTicks();
  const pids = engine?.workerPids.batch ?? [];
  const c0 = cpuSeconds(pids);
  const end = performance.now() + sliceS * 1000;
  while (performance.now() < end) {
    const t = performance.now();
    await db.query('select relname from pg_class order by oid limit 20');
    rtt.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  const t1 = cpuTicks();
  const c1 = cpuSeconds(pids);
  const done = pieces;
  stop.abort();
  engine?.close();
  await Promise.all(loops);
  const ncpu = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((l) => /^cpu\d/.test(l)).length;
  return {
    rtt,
    pieces: done / sliceS,
    batchCores: (c1 - c0) / sliceS,
    busyCores: ((t1.busy - t0.busy) / (t1.total - t0.total)) * ncpu,
    load: loadavg()[0]!,
  };
}

const modes: Mode[] = ['quiet', 'loose', 'pinned', 'single'];
const all: Record<Mode, Slice[]> = { quiet: [], loose: [], pinned: [], single: [] };
console.log(
  `batch-cpus: ${rounds} rounds × ${modes.length} slices of ${sliceS} s, ${clients} synthesis clients, a query ` +
    `every ${everyMs} ms; pinned = ${choice.reason}; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
);
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < modes.length; i++) {
    const mode = modes[(i + r) % modes.length]!;
    const s = await slice(mode);
    all[mode].push(s);
    const sorted = [...s.rtt].sort((a, b) => a - b);
    console.log(
      `  round ${r + 1} ${mode.padEnd(6)} query p50 ${q(sorted, 0.5)} p99 ${q(sorted, 0.99)} ms (${s.rtt.length}), ` +
        `batch ${s.batchCores.toFixed(2)} cores, ${s.pieces.toFixed(2)} pieces/s, machine ${s.busyCores.toFixed(2)} cores busy, load ${s.load.toFixed(1)}`,
    );
  }
}
await db.end();

function q(sorted: number[], p: number): string {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(1) : '-';
}

console.log(
  '\n| mode | query p50 / p95 / p99 ms (n) | batch workers, cores | pieces/s | machine busy cores | load average |',
);
console.log('|---|---|---|---|---|---|');
for (const mode of modes) {
  const rtt = all[mode].flatMap((s) => s.rtt).sort((a, b) => a - b);
  const mean = (f: (s: Slice) => number) => all[mode].reduce((a, s) => a + f(s), 0) / all[mode].length;
  const loads = all[mode].map((s) => s.load);
  console.log(
    `| ${mode} | ${q(rtt, 0.5)} / ${q(rtt, 0.95)} / ${q(rtt, 0.99)} (${rtt.length}) | ${mean((s) => s.batchCores).toFixed(2)} ` +
      `| ${mean((s) => s.pieces).toFixed(2)} ` +
      `| ${mean((s) => s.busyCores).toFixed(2)} | ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} |`,
  );
}
