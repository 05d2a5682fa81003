import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { runProcess } from '../../shared/kernel/process/spawn.ts';
import { startSpawner } from '../../shared/kernel/process/spawner.ts';

/**
 * How long one process spawn stalls the platform's event loop, with the process grown to the platform's size
 * (default 400 MB resident, `SPAWN_BLOCK_MB`): `child_process.spawn` called here (the fork on this thread) against
 * `runProcess` (forked by the spawner process), and `child_process.spawn` called on a worker thread (the fork is
 * of this same process, from another thread). Each spawn runs `true` and is awaited; a 1 ms timer probe and
 * monitorEventLoopDelay record the loop's stalls. Usage: `npx tsx benchmarks/spawn-block/run.ts [spawns]`.
 */
const spawns = Number(process.argv[2] ?? 40);
const mb = Number(process.env.SPAWN_BLOCK_MB ?? 400);

startSpawner(); // at boot, as the platform does: before it has grown
const hog: Buffer[] = [];
for (let i = 0; i < mb; i++) hog.push(Buffer.alloc(1 << 20, i & 0xff));

async function measure(name: string, one: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 3; i++) await one(); // warm
  const h = monitorEventLoopDelay({ resolution: 1 });
  const calls: number[] = [];
  const whole: number[] = [];
  let worst = 0;
  let last = performance.now();
  const probe = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
  }, 1);
  h.enable();
  for (let i = 0; i < spawns; i++) {
    const t = performance.now();
    const p = one();
    calls.push(performance.now() - t); // the synchronous part: how long the caller's thread was held
    await p;
    whole.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 5));
  }
  h.disable();
  clearInterval(probe);
  calls.sort((a, b) => a - b);
  whole.sort((a, b) => a - b);
  const q = (p: number, of = calls) => of[Math.min(of.length - 1, Math.floor(p * of.length))]!.toFixed(2);
  console.log(
    `${name}: spawn call held the thread p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms; ` +
      `loop delay p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms, max ${(h.max / 1e6).toFixed(1)} ms; ` +
      `worst 1 ms-timer drift ${worst.toFixed(1)} ms; start to exit of \`true\` p50 ${q(0.5, whole)} ms`,
  );
}

console.log(
  `rss ${Math.round(process.memoryUsage().rss / 1e6)} MB, ${spawns} spawns each, load ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
await measure('direct child_process.spawn', () => new Promise((r) => spawn('true').once('close', r)));
await measure('spawner (runProcess)', () => runProcess({ path: 'true' }, []));

// A worker thread that spawns on request: the fork then runs on its thread, but copies this process's memory map.
const worker = new Worker(
  `const { parentPort } = require('node:worker_threads');
   const { spawn } = require('node:child_process');
   parentPort.on('message', () => spawn('true').once('close', () => parentPort.postMessage(0)));`,
  { eval: true },
);
await measure(
  'worker-thread child_process.spawn',
  () => new Promise((r) => (worker.postMessage(0), worker.once('message', r))),
);
await worker.terminate();
console.log(`rss ${Math.round(process.memoryUsage().rss / 1e6)} MB (${hog.length} MB held)`);
