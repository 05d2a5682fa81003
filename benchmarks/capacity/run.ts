/**
 * Realtime capacity: how many concurrent calls one core holds within the latency contract, measured by driving
 * bench:voice-latency (real platform processes, synthetic Twilio callers, vendor doubles) at increasing call counts.
 *
 *   npm run bench:capacity -- --from 25 --step 25 --to 300 [--tts vendor] [--stt local] [--turns 2]
 *     → calls per core: the largest count whose turn p95 < 900 ms, first response p95 < 1500 ms and no failed call,
 *       divided by this machine's cores (the default of REALTIME_CALLS_PER_CORE);
 *   npm run bench:capacity -- --quick [--tts vendor]
 *     → the same at 10, 30 and 50 calls, one turn each (about 2-3 minutes): a wiring check and a lower bound (a
 *       count that held says the node holds at least that many), not the node's capacity;
 *   npm run bench:capacity -- --offered 500 --capacity 300 [--tts vendor]
 *     → admission mode: 500 calls offered at once to a platform with admission control at 300 calls; reports how
 *       many were accepted and refused, and whether the accepted calls kept turn p95 within the contract.
 *
 * Each step is its own voice-latency run (fresh platform processes and database); figures are the runs' own.
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    from: { type: 'string', default: '25' },
    step: { type: 'string', default: '25' },
    to: { type: 'string', default: '300' },
    turns: { type: 'string', default: '2' },
    tts: { type: 'string', default: 'local' },
    // `local`: the platform's own streaming recogniser hears the callers (issue 32); default the Deepgram double.
    stt: { type: 'string', default: 'double' },
    processes: { type: 'string' },
    'ramp-ms': { type: 'string', default: '50' },
    offered: { type: 'string' },
    capacity: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
if (args.quick) Object.assign(args, { from: '10', step: '20', to: '50', turns: '1' });

const TURN_P95_MS = 900;
const FIRST_P95_MS = 1500;

interface StepResult {
  calls: number;
  rejected: number;
  failures: number;
  turnP95: number;
  firstResponseP95: number;
  cores: number;
}

/** One bench:voice-latency run; its report goes to stderr, its BENCH_RESULT line is parsed. */
function voiceLatency(calls: number, extra: string[]): Promise<StepResult> {
  const argv = ['--import', 'tsx', 'benchmarks/voice-latency/run.ts', '--calls', String(calls)];
  argv.push('--turns', args.turns, '--tts', args.tts, '--stt', args.stt, '--ramp-ms', args['ramp-ms'], ...extra);
  if (args.processes) argv.push('--processes', args.processes);
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let result: StepResult | null = null;
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.startsWith('BENCH_RESULT ')) result = JSON.parse(line.slice(13)) as StepResult;
      else process.stderr.write(line + '\n');
    }
  });
  return new Promise((resolve, reject) =>
    child.on('exit', (code) =>
      result ? resolve(result) : reject(new Error(`voice-latency at ${calls} calls exited ${code} without a result`)),
    ),
  );
}

const held = (r: StepResult) => r.failures === 0 && r.turnP95 < TURN_P95_MS && r.firstResponseP95 < FIRST_P95_MS;
const ms = (v: number) => (Number.isFinite(v) ? `${Math.round(v)} ms` : '-');

const TARGETS = `turn p95 < ${TURN_P95_MS} ms, first response p95 < ${FIRST_P95_MS} ms, no failed call`;

async function sweep(): Promise<void> {
  console.log(
    `capacity sweep: ${args.from} to ${args.to} calls by ${args.step}, ${args.tts} TTS, ${args.stt} STT, ${args.turns} turns; a count holds when ${TARGETS}`,
  );
  const rows: StepResult[] = [];
  let best: StepResult | null = null;
  for (let n = Number(args.from); n <= Number(args.to); n += Number(args.step)) {
    const r = await voiceLatency(n, []);
    rows.push(r);
    console.log(
      `capacity: ${n} calls: turn p95 ${ms(r.turnP95)}, first response p95 ${ms(r.firstResponseP95)}, ${r.failures} failed → ${held(r) ? 'held' : 'not held'}`,
    );
    if (!held(r)) break;
    best = r;
  }
  const cores = cpus().length;
  console.log(
    `\ncapacity (${args.tts} TTS, ${args.stt} STT, ${args.turns} turns, ${cores} cores; targets: ${TARGETS}):`,
  );
  console.log(
    `${'calls'.padStart(6)} ${'turn p95'.padStart(10)} ${'first p95'.padStart(10)} ${'failed'.padStart(7)}  verdict`,
  );
  for (const r of rows)
    console.log(
      `${String(r.calls).padStart(6)} ${ms(r.turnP95).padStart(10)} ${ms(r.firstResponseP95).padStart(10)} ${String(r.failures).padStart(7)}  ${held(r) ? 'held' : 'not held'}`,
    );
  if (!best) {
    console.log(
      `\nno call count held the contract (turn p95 < ${TURN_P95_MS} ms, first response p95 < ${FIRST_P95_MS} ms)`,
    );
    process.exit(1);
  }
  const perCore = best.calls / cores;
  // The sweep stopped at its top without a count that missed: the node holds at least this much.
  const bound = best === rows.at(-1) ? 'at least ' : '';
  console.log(
    `\ncalls per core within the latency targets: ${bound}${perCore.toFixed(1)} (${best.calls} calls on ${cores} cores); ` +
      `set REALTIME_CALLS_PER_CORE=${Math.floor(perCore)} (or REALTIME_MAX_SESSIONS per process)`,
  );
  if (bound) console.log(`(no count up to ${args.to} missed the targets: raise --to for the node's real figure)`);
}

async function admission(): Promise<void> {
  const offered = Number(args.offered);
  const capacity = Number(args.capacity ?? Math.floor(offered / 2));
  const r = await voiceLatency(offered, ['--admission-capacity', String(capacity)]);
  const accepted = r.calls - r.rejected;
  console.log(`\nadmission control: ${offered} calls offered, capacity ${capacity} (${args.tts} TTS)`);
  console.log(`  accepted ${accepted}, refused (busy) ${r.rejected}, failed ${r.failures}`);
  console.log(
    `  accepted calls: turn p95 ${ms(r.turnP95)} (contract < ${TURN_P95_MS} ms), first response p95 ${ms(r.firstResponseP95)} (< ${FIRST_P95_MS} ms)`,
  );
  console.log(
    `  verdict: ${held(r) ? '✔ the accepted calls kept the contract' : '✘ the accepted calls did not keep the contract'}`,
  );
  process.exit(held(r) ? 0 : 1);
}

await (args.offered ? admission() : sweep());
