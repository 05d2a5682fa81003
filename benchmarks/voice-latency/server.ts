/**
 * The platform under test, in its own processes (so the synthetic callers and vendor doubles in the runner do not
 * share its event loops): api + realtime + cpu roles on a throwaway database cloned from the migrated template,
 * run as BENCH_PROCESSES copies sharing one port (node:cluster, as `PROCESSES` does for `npm start`), and, as
 * `npm start` does, the test pool (queue cpu-tests) in one process of its own at niceness 10 (scripts/tests-process.ts).
 * Prints one JSON line `{url, apiKey, agentId, developerId, databaseUrl}` on stdout once ready. On SIGTERM it prints `{final: …}` (CPU of the
 * platform's process tree since ready, user and system; the sessions' preemptive-reply counts) and stops.
 */
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../lib/free-port.ts';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { LoopDelay } from '../lib/bench-platform.ts';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { startPlatform } from '../../scripts/platform.ts';
import { startTestsProcess } from '../../scripts/tests-process.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { resolveBatchCpus } from '../../shared/kernel/process/cpu-affinity.ts';
import { insertDeveloper } from '../../shared/kernel/db/developers.ts';
import { createDb } from '../../shared/kernel/db/pool.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import setup from '../../support/global-setup.ts';
import { treeCpu } from './cpu.ts';
import { cpuProfiles, traceRequests } from './trace-requests.ts';
import { createTestDatabase } from '../../support/helpers/db.ts';

if (cluster.isPrimary) await primary();
else await copy();

async function primary(): Promise<void> {
  await setup();
  const database = await createTestDatabase();
  const s3dir = await mkdtemp(join(tmpdir(), 'vap-bench-s3-'));
  const port = await freePort();
  const env = {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: database.url,
    DATABASE_POOL_MAX: '10',
    REDIS_PREFIX: `vl${randomBytes(4).toString('hex')}`,
    S3_EMBEDDED_DIR: s3dir,
    // One port for every process (copies and the test pool's), so they share one embedded S3.
    S3_EMBEDDED_PORT: String(await freePort()),
  };
  const n = Math.max(1, Number(process.env.BENCH_PROCESSES ?? availableParallelism()));
  const ready = Array.from({ length: n }, () => {
    const w = cluster.fork(env);
    return new Promise<void>((resolve, reject) => {
      w.on('message', (m) => m === 'ready' && resolve());
      w.on('exit', (code) => reject(new Error(`platform process exited (${code}) before it was ready`)));
    });
  });
  await Promise.all(ready);
  // Placed as scripts/start.ts places it: on the batch work's cpus (SPEECH_LOCAL_BATCH_CPUS).
  const tests = startTestsProcess(
    { ...process.env, ...env, PORT: '0' },
    createLogger(env.LOG_LEVEL),
    3000,
    resolveBatchCpus(loadConfig({ ...process.env, ...env }).SPEECH_LOCAL_BATCH_CPUS).pinning,
  );
  // Its start (a whole platform's boot, seconds of CPU) is not the calls' cost: measured from when it is up, as
  // on a deployment where it started with the platform.
  await tests.ready;

  const db = createDb(database.url, 1);
  const dev = await insertDeveloper(db, 'voice-latency', 'scale');
  const { key } = await mintKey(db, dev.id, 'bench');
  await db.end();
  const url = `http://127.0.0.1:${port}`;
  const res = await fetch(`${url}/v1/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Benchmark agent',
      systemPrompt: 'You answer the phone for a dental practice.',
      firstMessage: 'Hello, thanks for calling. How can I help?',
      llmModel: 'gpt-4o-mini',
      ...(process.env.BENCH_TTS_PROVIDER ? { ttsProvider: process.env.BENCH_TTS_PROVIDER } : {}),
    }),
  });
  if (res.status !== 201) {
    console.error('agent create failed', res.status, await res.text());
    process.exit(1);
  }
  const agent = (await res.json()) as { id: string };
  // The database too: a benchmark may add developers of its own (benchmarks/abuse: a second tenant).
  console.log(
    JSON.stringify({
      url,
      apiKey: key,
      agentId: agent.id,
      developerId: dev.id,
      databaseUrl: database.url,
      // What another process needs to join this platform (benchmarks/abuse: a realtime node it kills).
      redisPrefix: env.REDIS_PREFIX,
      s3Port: env.S3_EMBEDDED_PORT,
      s3Dir: s3dir,
      processes: n,
    }),
  );
  const cpu0 = treeCpu(process.pid);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const cpu1 = treeCpu(process.pid);
    const db2 = createDb(database.url, 1);
    const { rows } = await db2.query<Record<string, string | null>>(
      `select count(*) as sessions,
              sum((metrics->>'preparedReplies')::int) as prepared,
              sum((metrics->>'preparedRepliesDropped')::int) as dropped,
              sum((metrics->>'droppedLlmTokens')::int) as "droppedLlmTokens",
              sum((metrics->>'droppedTtsCharacters')::int) as "droppedTtsChars",
              sum((metrics->>'llmTokens')::int) as "llmTokens",
              sum((metrics->>'preparedDroppedWentOn')::int) as "wentOn",
              sum((metrics->>'preparedDroppedWordsChanged')::int) as "wordsChanged",
              sum((metrics->>'preparedDroppedFinalDiffers')::int) as "finalDiffers"
         from rt_sessions`,
    );
    await db2.end();
    const num = (v: string | null | undefined) => Number(v ?? 0);
    const r = rows[0] ?? {};
    console.log(
      JSON.stringify({
        final: {
          cpu: { user: cpu1.user - cpu0.user, system: cpu1.system - cpu0.system, processes: cpu1.processes },
          sessions: num(r.sessions),
          prepared: num(r.prepared),
          dropped: num(r.dropped),
          droppedLlmTokens: num(r.droppedLlmTokens),
          droppedTtsChars: num(r.droppedTtsChars),
          llmTokens: num(r.llmTokens),
          droppedBy: { wentOn: num(r.wentOn), wordsChanged: num(r.wordsChanged), finalDiffers: num(r.finalDiffers) },
        },
      }),
    );
    const exits = Object.values(cluster.workers ?? {}).map(
      (w) => new Promise((r) => (w!.isDead() ? r(null) : w!.on('exit', r))),
    );
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    await Promise.all([...exits, tests.stop()]);
    await database.drop();
    await rm(s3dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  // The event-loop delay of each copy since the last ask (benchmarks/lib/bench-platform.ts: loopDelay()).
  process.on('SIGUSR2', () => {
    const copies = Object.values(cluster.workers ?? {}).filter((w) => w && !w.isDead());
    void Promise.all(
      copies.map(
        (w) =>
          new Promise<LoopDelay>((resolve) => {
            const on = (m: { loop?: LoopDelay }) => {
              if (!m?.loop) return;
              w!.off('message', on);
              resolve(m.loop);
            };
            w!.on('message', on);
            w!.send('loop?');
          }),
      ),
    ).then((loop) => console.log(JSON.stringify({ loop })));
  });
}

async function copy(): Promise<void> {
  const config = loadConfig(process.env);
  const platform = await startPlatform(config, createLogger(config.LOG_LEVEL), ['api', 'realtime', 'cpu'], {
    testPoolElsewhere: true,
  });
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const requests = traceRequests('/v1/agents', platform.infra.db);
  const profiles = process.env.BENCH_CPU_PROF ? cpuProfiles(process.env.BENCH_CPU_PROF) : null;
  process.on('message', async (m) => {
    if (m !== 'loop?') return;
    const ms = (ns: number) => Math.round(ns / 1e5) / 10;
    const loop: LoopDelay = {
      p50: ms(delay.percentile(50)),
      p99: ms(delay.percentile(99)),
      max: ms(delay.max),
      agents: requests.take(),
    };
    // Writing a profile blocks this loop: after the span's figures are taken, before the next span's begin.
    await profiles?.next();
    delay.reset();
    process.send?.({ loop });
  });
  process.send?.('ready');
  process.on('SIGTERM', () => void platform.stop().finally(() => process.exit(0)));
}
