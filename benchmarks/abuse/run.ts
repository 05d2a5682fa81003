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
import { startBenchPlatform } from '../lib/bench-platform.ts';
import type { Final } from '../voice-latency/report.ts';
import { pauseMs, pct, UTTERANCES } from '../voice-latency/script.ts';
import { startAbuse } from './abuse.ts';
import { liveCall, recordingKey, requestLoop, type CallResult, type RequestFigures } from './victim.ts';

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
    // Leave out a load (flood, synthesis; comma-separated) to see what each costs the victim.
    skip: { type: 'string', default: '' },
  },
});
const TURNS = Math.max(2, Number(args.turns));
const TOLERANCE = Number(args.tolerance);
const WATCHDOG_S = 300;
const REPLY = 'Sure, I can help with that.';

async function main(): Promise<void> {
  const load0 = loadavg();
  const dg = await startDeepgramLiveDouble({ script: (_c, u) => UTTERANCES[u % UTTERANCES.length]! });
  const llm = await startOpenAiChatDouble(() => ({ text: REPLY }), {
    key: 'sk-test-abuse',
    firstTokenMs: 250,
    tokensPerSecond: 60,
  });
  const srv = await startBenchPlatform<Final>({
    ...voicePlatformEnv(dg, llm),
    REALTIME_RECORDINGS: 'true',
    BENCH_PROCESSES: args.processes,
    // Campaigns are refused at creation here (webhookUrl); an account makes the route reach that check.
    TWILIO_ACCOUNT_SID: 'AC00000000000000000000000000000035',
    TWILIO_AUTH_TOKEN: 'token-issue-35',
    TWILIO_API_BASE_URL: 'http://127.0.0.1:9',
    // The abuser's test runs still in progress at the end are cut short, not waited for.
    SHUTDOWN_GRACE_MS: '3000',
  });
  const watchdog = setTimeout(() => {
    console.error(`abuse: watchdog: the run took more than ${WATCHDOG_S} s; stopping`);
    srv.child.kill('SIGKILL');
    process.exit(2);
  }, WATCHDOG_S * 1000);
  watchdog.unref();

  const victim: Tenant = { url: srv.url, apiKey: srv.apiKey, developerId: srv.developerId, agentId: srv.agentId };
  const abuser = await hostileDeveloper(srv.url, srv.databaseUrl);

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

  console.error(`abuse: idle phase, ${TURNS} turns (load ${fmtLoad()})`);
  const idle = await phase(victim, turns, clip);
  const victimRecording = await recordingKey(victim, idle.call.sessionId);
  if (!victimRecording) throw new Error("the victim's idle call left no recording to aim at");

  console.error(`abuse: starting the abuse (load ${fmtLoad()})`);
  const abuse = await startAbuse(abuser, {
    victim: { developerId: victim.developerId, key: victimRecording },
    callSid: abuserCall.callSid,
    synthLoops: Number(args['synth-loops']),
    synthChars: Number(args['synth-chars']),
    skip: new Set(args.skip.split(',').filter((x): x is 'flood' | 'synthesis' => x === 'flood' || x === 'synthesis')),
  });
  console.error(`abuse: under abuse, ${TURNS} turns (load ${fmtLoad()})`);
  const hostile = await phase(victim, turns, clip);
  const outcomes = await abuse.stop();

  const fin = await srv.stop();
  await dg.close();
  await llm.close();
  const missed = report(idle, hostile, outcomes, fin, load0, clipPcm.length / 32_000);
  process.exit(missed ? 1 : 0);
}

/** A second developer of the pro tier on the same platform, with an agent of its own. */
async function hostileDeveloper(url: string, databaseUrl: string): Promise<Tenant> {
  const db = createDb(databaseUrl, 1);
  const dev = await insertDeveloper(db, 'abuser', 'pro');
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
}

/** The victim's call, with its request loop running until the call ends. */
async function phase(victim: Tenant, turns: Buffer[], clip: Buffer): Promise<Phase> {
  const t0 = performance.now();
  let over = false;
  const requests = requestLoop(victim, clip, () => over);
  const call = await liveCall(victim, turns, '+15550000002').finally(() => (over = true));
  return { call, requests: await requests, seconds: (performance.now() - t0) / 1000 };
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
    `phases: idle ${Math.round(idle.seconds)} s, under abuse ${Math.round(hostile.seconds)} s\n`,
    `| figure | idle p50 / pN (n) | under abuse p50 / pN (n) | ratio | target |`,
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

await main();
