import autocannon from 'autocannon';
import { startChild } from '../lib/processes.ts';
import { benchDatabase } from '../lib/bench-database.ts';
import { apiRoleEnv } from './api-env.ts';

const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(url: string, headers: Record<string, string>, overallRate?: number): Promise<Figures> {
  const result = await autocannon({
    url,
    headers,
    connections: overallRate ? 10 : CONNECTIONS,
    duration: DURATION,
    ...(overallRate ? { overallRate } : {}),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

const { dbUrl, apiKey: key, s3dir, drop } = await benchDatabase('scale');

const hello = await startChild(['benchmarks/api-overhead/hello.ts'], {}, (o) => /PORT=\d+/.test(o));
const helloPort = /PORT=(\d+)/.exec(hello.output())![1];
const platformPort = String(20_000 + Math.floor(Math.random() * 20_000));
// BENCH_SKIP_ENGINES=1: the same api role without its engine registries' build step (issue 14), for an A/B run.
const skipEngines = process.env.BENCH_SKIP_ENGINES === '1';
const platform = await startChild(
  [...(skipEngines ? ['--import', './benchmarks/api-overhead/skip-engines.ts'] : []), 'scripts/start.ts', 'api'],
  apiRoleEnv({ dbUrl, s3dir, port: platformPort }),
  (o) => o.includes('platform is up') || o.includes('Voice Agent Platform is up'),
);

try {
  const helloUrl = `http://127.0.0.1:${helloPort}/hello`;
  const apiUrl = `http://127.0.0.1:${platformPort}/v1/me`;
  const auth = { authorization: `Bearer ${key}` };
  const check = await fetch(apiUrl, { headers: auth });
  if (check.status !== 200) throw new Error(`authenticated route answered ${check.status}`);

  // Warm both servers (JIT, caches) before measuring.
  await autocannon({ url: helloUrl, duration: 2, connections: 8 });
  await autocannon({ url: apiUrl, headers: auth, duration: 2, connections: 8 });

  const bareMax = await load(helloUrl, {});
  const apiMax = await load(apiUrl, auth);
  const bare500 = await load(helloUrl, {}, 500);
  const api500 = await load(apiUrl, auth, 500);

  const ratio = apiMax.rps / bareMax.rps;
  const fmt = (f: Figures) =>
    `${f.rps.toFixed(0).padStart(8)} req/s  p50 ${String(f.p50).padStart(3)} ms  p99 ${String(f.p99).padStart(3)} ms  errors ${f.errors}`;
  console.log(
    `\napi-overhead (${DURATION}s per run, ${CONNECTIONS} connections at max, autocannon)` +
      (skipEngines ? ', buildEngines skipped (BENCH_SKIP_ENGINES=1)' : ''),
  );
  console.log(`  bare fastify, max:       ${fmt(bareMax)}`);
  console.log(`  GET /v1/me (auth), max:  ${fmt(apiMax)}`);
  console.log(`  bare fastify @500 req/s: ${fmt(bare500)}`);
  console.log(`  GET /v1/me @500 req/s:   ${fmt(api500)}`);
  console.log(`\n  throughput ratio ${ratio.toFixed(2)}  (target ≥ 0.50)  ${ratio >= 0.5 ? 'PASS' : 'FAIL'}`);
  console.log(`  p99 at 500 req/s ${api500.p99} ms  (target ≤ 10 ms)  ${api500.p99 <= 10 ? 'PASS' : 'FAIL'}`);
  if (apiMax.errors || api500.errors)
    console.log(`  WARNING: ${apiMax.errors + api500.errors} errors/non-2xx responses`);
} finally {
  await hello.stop();
  await platform.stop();
  await drop();
}
