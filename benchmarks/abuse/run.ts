/**
 * Hostile tenants on a shared platform (issue #35): the reproductions of the issue's findings run together against
 * one platform while a second developer's live call and API requests are measured, idle first and then under the
 * abuse, in the same run.
 *
 *   npm run test:abuse [-- --turns 12 --processes 1]
 *
 * Prints the victim's turn p95 and request p99, idle and under abuse, their ratio against the target (within 20 %),
 * and whether each reproduction was contained; exits 1 when a target is missed or a reproduction was not contained,
 * 2 when the watchdog stopped a run that took too long. Everything is on loopback: STT and LLM are the doubles the
 * voice-latency benchmark uses, TTS and the transcription's STT are the real local engines.
 */
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { insertDeveloper } from '../../shared/kernel/db/developers.ts';
import { createDb } from '../../shared/kernel/db/pool.ts';
import { trimSilence } from '../../shared/kernel/audio/trim-silence.ts';
import { wav } from '../../support/doubles/audio.ts';
import { startDeepgramLiveDouble } from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import { startOpenAiChatDouble } from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { fliteUtterance, voicePlatformEnv } from '../../support/realtime/helpers.ts';
import { tenantRequest, type Outcome, type Tenant } from '../../support/abuse/hostile-tenant.ts';
import { startBenchPlatform, type BenchPlatform, type LoopDelay } from '../lib/bench-platform.ts';
import type { Final } from '../voice-latency/report.ts';
import { pauseMs, pct, UTTERANCES } from '../voice-latency/script.ts';
import { startAbuse, type AbuseLoad } from './abuse.ts';
import { startDoomedNode, startTwilioWorld, twilioEnv } from './campaigns.ts';
import { CpuProfile, type PhaseCpu } from './profile.ts';
import {
  liveCall,
  recordingKey,
  requestLoop,
  requestLoopApart,
  turnStages,
  type CallResult,
  type RequestFigures,
  type TurnStages,
} from './victim.ts';

const { values: args } = parseArgs({
  options: {
    // Turns of the victim's call in each phase (about 6 s each); the call's p95 is over these.
    turns: { type: 'string', default: '12' },
    // Platform processes; 1 is the default one-process mode (`npm start`), where api, calls and workers share a loop.
    processes: { type: 'string', default: '1' },
    // Under abuse, each figure may be at most this much above idle.
    tolerance: { type: 'string', default: '0.2' },
    'synth-loops': { type: 'string', default: '2' },
    'synth-chars': { type: 'string', default: '1500' },
    // Leave out a load (flood, synthesis, campaigns; comma-separated) to see what each costs the victim.
    skip: { type: 'string', default: '' },
    // A CPU profile of each platform process per span between two phase marks, written into this folder
    // (<pid>-1: the idle phase, <pid>-3: under abuse; open in Chrome's DevTools or speedscope).
    'cpu-prof': { type: 'string', default: '' },
  },
});
const TURNS = Math.max(2, Number(args.turns));
const TOLERANCE = Number(args.tolerance);
const WATCHDOG_S = 540;
const REPLY = 'Sure, I can help with that.';

async function main(): Promise<void> {
  const load0 = loadavg();
  const dg = await startDeepgramLiveDouble({ script: (_c, u) => UTTERANCES[u % UTTERANCES.length]! });
  const llm = await startOpenAiChatDouble(() => ({ text: REPLY }), {
    key: 'sk-test-abuse',
    firstTokenMs: 250,
    tokensPerSecond: 60,
  });
  const world = await startTwilioWorld();
  const platformEnv = { ...voicePlatformEnv(dg, llm), ...twilioEnv(world.rest), REALTIME_RECORDINGS: 'true' };
  const srv = await startBenchPlatform<Final>({
    ...platformEnv,
    BENCH_PROCESSES: args.processes,
    ...(args['cpu-prof'] ? { BENCH_CPU_PROF: args['cpu-prof'] } : {}),
    // The abuser's test runs still in progress at the end are cut short, not waited for.
    SHUTDOWN_GRACE_MS: '3000',
  });
  world.urls.main = srv.url;
  let killNode = async () => {};
  const watchdog = setTimeout(() => {
    console.error(`abuse: watchdog: the run took more than ${WATCHDOG_S} s; stopping`);
    void killNode();
    // SIGTERM lets the platform stop its own processes; SIGKILL if it has not within 15 s.
    srv.child.kill('SIGTERM');
    setTimeout(() => {
      srv.child.kill('SIGKILL');
      process.exit(2);
    }, 15_000);
  }, WATCHDOG_S * 1000);
  watchdog.unref();

  const victim: Tenant = { url: srv.url, apiKey: srv.apiKey, developerId: srv.developerId, agentId: srv.agentId };
  const abuser = await hostileDeveloper(srv.url, srv.databaseUrl, 'pro');
  // Finding 5's account (starter: 5 sessions at once), and finding 6's realtime node, started before anything is
  // measured (its boot is not the abuse's cost).
  const starter = await hostileDeveloper(srv.url, srv.databaseUrl, 'starter');
  const node = args.skip.includes('campaigns')
    ? { url: '', kill: async () => {} }
    : await startDoomedNode({
        ...platformEnv,
        NODE_ENV: 'test',
        DATABASE_URL: srv.databaseUrl,
        REDIS_PREFIX: srv.redisPrefix,
        S3_EMBEDDED_DIR: srv.s3Dir,
        S3_EMBEDDED_PORT: srv.s3Port,
      });
  world.urls.doomed = node.url;
  killNode = () => node.kill();
  const greeting = await fliteUtterance('Hi, you have reached Dana. Please leave a message after the tone.');

  // The victim says the voice-latency benchmark's sentences, with their mid-sentence pauses, in turn.
  const said = new Map<string, Buffer>();
  for (const seg of UTTERANCES.flatMap((u) => u.split(' | '))) said.set(seg, trimSilence(await fliteUtterance(seg)));
  const turns = Array.from({ length: TURNS }, (_, k) =>
    Buffer.concat(
      UTTERANCES[k % UTTERANCES.length]!.split(' | ').flatMap((seg, j) =>
        j === 0 ? [said.get(seg)!] : [Buffer.alloc(16 * pauseMs(0, k)), said.get(seg)!],
      ),
    ),
  );
  const clipPcm = await fliteUtterance('Yes, please.', 16000);
  const clip = wav(clipPcm, 16000);

  // The abuser's one phone call, which its replays play again (and the platform's warm-up).
  const abuserCall = await liveCall(abuser, turns.slice(0, 1), '+15550000001');
  await recordingKey(abuser, abuserCall.sessionId);
  await warmUp(victim, clip);

  const profile = new CpuProfile(process.pid);
  profile.start('warm-up');
  console.error(`abuse: idle phase, ${TURNS} turns (load ${fmtLoad()})`);
  const idle = await phase(srv, profile, 'idle', victim, turns, clip);
  const victimRecording = await recordingKey(victim, idle.call.sessionId);
  if (!victimRecording) throw new Error("the victim's idle call left no recording to aim at");

  console.error(`abuse: starting the abuse (load ${fmtLoad()})`);
  const abuse = await startAbuse(abuser, {
    victim: { developerId: victim.developerId, key: victimRecording },
    callSid: abuserCall.callSid,
    synthLoops: Number(args['synth-loops']),
    synthChars: Number(args['synth-chars']),
    skip: new Set(args.skip.split(',').filter((x): x is AbuseLoad => ['flood', 'synthesis', 'campaigns'].includes(x))),
    campaigns: { world, starter, node, greeting },
  });
  console.error(`abuse: under abuse, ${TURNS} turns (load ${fmtLoad()})`);
  const hostile = await phase(srv, profile, 'under abuse', victim, turns, clip);
  profile.phase(null);
  const outcomes = await abuse.stop();

  await node.kill();
  await world.close();
  const fin = await srv.stop();
  await dg.close();
  await llm.close();
  const missed = report(idle, hostile, outcomes, fin, load0, clipPcm.length / 32_000);
  process.exit(missed ? 1 : 0);
}

/** Another developer on the same platform, with an agent of its own. */
async function hostileDeveloper(url: string, databaseUrl: string, tier: 'pro' | 'starter'): Promise<Tenant> {
  const db = createDb(databaseUrl, 1);
  const dev = await insertDeveloper(db, `abuser-${tier}`, tier);
  const { key } = await mintKey(db, dev.id, 'abuse');
  await db.end();
  const t: Tenant = { url, apiKey: key, developerId: dev.id, agentId: '' };
  const agent = await tenantRequest(t, '/v1/agents', {
    json: { name: 'Abuser agent', firstMessage: 'Hello, thanks for calling.', llmModel: 'gpt-4o-mini' },
  });
  if (agent.status !== 201) throw new Error(`creating the abuser's agent answered ${agent.status}: ${agent.text}`);
  return { ...t, agentId: agent.body.id as string };
}

/** A couple of seconds of the victim's requests, so that neither phase pays for a first time. */
async function warmUp(victim: Tenant, clip: Buffer): Promise<void> {
  const until = performance.now() + 2000;
  await requestLoop(victim, clip, () => performance.now() > until);
}

interface Phase {
  call: CallResult;
  requests: RequestFigures;
  seconds: number;
  /** The platform's own breakdown of the call's turns. */
  stages: TurnStages;
  /** Each platform process's event-loop delay over the phase. */
  loop: LoopDelay[];
  /** The runner's event-loop delay over the phase (where the victim's requests are timed). */
  runner: LoopDelay;
  /** CPU by kind of process over the phase. */
  cpu: PhaseCpu;
  /** The machine's 1-minute load average at the phase's start and end. */
  load: [number, number];
}

/** The victim's call, with its request loop running until the call ends; what it competed with, measured. */
async function phase(
  srv: BenchPlatform<Final>,
  profile: CpuProfile,
  name: string,
  victim: Tenant,
  turns: Buffer[],
  clip: Buffer,
): Promise<Phase> {
  await srv.loopDelay();
  profile.phase(name);
  // The runner's own loop (the victim's requests are timed here, beside the callers and doubles it runs).
  const runnerLoop = monitorEventLoopDelay({ resolution: 10 });
  runnerLoop.enable();
  const load0 = loadavg()[0]!;
  const t0 = performance.now();
  const requests = requestLoopApart(victim, clip);
  const call = await liveCall(victim, turns, '+15550000002');
  const figures = await requests.stop();
  const seconds = (performance.now() - t0) / 1000;
  const loop = await srv.loopDelay();
  runnerLoop.disable();
  profile.phase(`after ${name}`);
  const cpu = profile.phases.get(name)!;
  const ms = (ns: number) => Math.round(ns / 1e5) / 10;
  const runner = { p50: ms(runnerLoop.percentile(50)), p99: ms(runnerLoop.percentile(99)), max: ms(runnerLoop.max) };
  const done = {
    call,
    requests: figures,
    seconds,
    loop,
    runner,
    cpu,
    load: [load0, loadavg()[0]!] as [number, number],
  };
  return { ...done, stages: await turnStages(victim, call.sessionId) };
}

const fmtLoad = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

/** Prints both phases, the ratios against the target and the reproductions; true when anything was missed. */
function report(
  idle: Phase,
  hostile: Phase,
  outcomes: Outcome[],
  fin: Final | null,
  load0: number[],
  clipSeconds: number,
): boolean {
  const rows: Array<[string, (p: Phase) => number[], number]> = [
    ['victim call: turn (last speech → first audio)', (p) => p.call.turnMs, 95],
    ['GET /v1/agents', (p) => p.requests.agents, 99],
    [`POST /v1/transcribe (local STT, ${clipSeconds.toFixed(1)} s clip)`, (p) => p.requests.transcribe, 99],
  ];
  let missed = false;
  const out: string[] = [
    `\nabuse: one platform (${args.processes} process(es)) on ${cpus().length} cores` +
      `${args.skip ? `, without ${args.skip}` : ''}; ` +
      `load average ${load0.map((x) => x.toFixed(1)).join(' ')} at the start, ${fmtLoad()} at the end`,
    `phases: idle ${Math.round(idle.seconds)} s (load ${fmtPair(idle.load)}), under abuse ` +
      `${Math.round(hostile.seconds)} s (load ${fmtPair(hostile.load)})\n`,
    `| figure | idle p50 / pN (n) | under abuse p50 / pN (n) | ratio under abuse / idle | target |`,
    `|---|---|---|---|---|`,
  ];
  for (const [name, xs, p] of rows) {
    const [a, b] = [xs(idle), xs(hostile)];
    const ratio = pct(b, p) / pct(a, p);
    const ok = ratio <= 1 + TOLERANCE;
    missed ||= !ok;
    out.push(
      `| ${name}, p${p} | ${f(pct(a, 50))} / **${f(pct(a, p))}** ms (${a.length}) | ` +
        `${f(pct(b, 50))} / **${f(pct(b, p))}** ms (${b.length}) | ${ratio.toFixed(2)} | ` +
        `≤ ${(1 + TOLERANCE).toFixed(2)} ${ok ? '✔' : '✘'} |`,
    );
  }
  for (const [name, ph] of [
    ['idle', idle],
    ['under abuse', hostile],
  ] as const) {
    if (ph.call.cutIns) out.push(`${name}: the agent spoke over ${ph.call.cutIns} of the caller's pauses`);
    if (ph.requests.errors.length) {
      missed = true;
      out.push(`${name}: requests that failed: ${ph.requests.errors.join(', ')}`);
    }
  }
  out.push(...whereItWent(idle, hostile));
  out.push('\nreproductions (issue #35), all at once against the same platform:');
  for (const o of outcomes) {
    if (o.contained === false) missed = true;
    const mark = o.contained === null ? '–' : o.contained ? '✔ contained' : '✘ NOT contained';
    out.push(`  ${o.item}. ${o.title}: ${mark} — ${o.detail}`);
  }
  if (fin)
    out.push(`\nplatform CPU over the run: user ${fin.cpu.user.toFixed(1)} s, system ${fin.cpu.system.toFixed(1)} s`);
  out.push(missed ? '\nabuse: a target was missed' : '\nabuse: every target held');
  console.log(out.join('\n'));
  return missed;
}

const f = (v: number) => (Number.isFinite(v) ? String(Math.round(v)) : '-');
const fmtPair = ([a, b]: [number, number]) => `${a.toFixed(1)} → ${b.toFixed(1)}`;

/**
 * What the victim competed with: its turns' stages as the platform traced them, the platform process's event-loop
 * delay, and the CPU (in cores: CPU seconds over the phase's seconds) of each kind of process, idle and under abuse.
 */
function whereItWent(idle: Phase, hostile: Phase): string[] {
  const out = [
    "\nwhere the victim's turn went (the platform's trace, ms): stage idle p50 / p95 → under abuse p50 / p95",
  ];
  for (const k of ['latency', 'endpoint', 'stt', 'llm', 'tts', 'overhead'] as const) {
    const [a, b] = [idle.stages[k], hostile.stages[k]];
    out.push(`  ${k.padEnd(9)} ${f(pct(a, 50))} / ${f(pct(a, 95))} → ${f(pct(b, 50))} / ${f(pct(b, 95))}`);
  }
  const loop = (l: LoopDelay[]) => l.map((x) => `p50 ${x.p50} / p99 ${x.p99} / max ${x.max}`).join('; ');
  out.push(`platform process event-loop delay (ms): idle ${loop(idle.loop)} → under abuse ${loop(hostile.loop)}`);
  out.push(`runner's event-loop delay (ms): idle ${loop([idle.runner])} → under abuse ${loop([hostile.runner])}`);
  const stages = (l: LoopDelay[]) =>
    l
      .map((x) => x.agents)
      .filter((a) => a !== undefined)
      .map(
        (a) =>
          `total ${a.total.join('/')}: hooks ${a.hooks.join('/')}, handler ${a.handler.join('/')}, send ${a.send.join('/')}, ` +
          `finish ${a.finish.join('/')} (${a.n}; ${a.poolQueued} found the database pool queued)`,
      )
      .join('; ');
  out.push(`GET /v1/agents as the platform timed it, p50/p99 ms: idle ${stages(idle.loop)}`);
  out.push(`  → under abuse ${stages(hostile.loop)}`);
  out.push('CPU in cores (CPU s / phase s), idle → under abuse:');
  const cores = (p: Phase, k: string) => (p.cpu.byKind.get(k) ?? 0) / p.cpu.seconds;
  const kinds = [...new Set([...idle.cpu.byKind.keys(), ...hostile.cpu.byKind.keys()])];
  kinds.sort((x, y) => cores(hostile, y) - cores(hostile, x));
  for (const k of kinds) {
    if (Math.max(cores(idle, k), cores(hostile, k)) < 0.005) continue;
    out.push(`  ${cores(idle, k).toFixed(2)} → ${cores(hostile, k).toFixed(2)}  ${k}`);
  }
  const m = (p: Phase) =>
    `${(p.cpu.machineBusy / p.cpu.seconds).toFixed(2)} busy, of it others ${(p.cpu.others / p.cpu.seconds).toFixed(2)}`;
  out.push(`  machine: ${m(idle)} → ${m(hostile)} (of ${cpus().length} cores)`);
  return out;
}

await main();
