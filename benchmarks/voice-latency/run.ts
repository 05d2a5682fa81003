/**
 * Voice latency benchmark: N concurrent synthetic Twilio calls against the real platform (own process).
 *
 *   npm run bench:voice-latency -- --calls 50 --turns 3
 *
 * STT and LLM are local doubles speaking Deepgram's live WebSocket and OpenAI's streaming Chat Completions with the
 * declared latency profiles below; TTS is the real local engine (flite workers), or with `--tts vendor` a Cartesia
 * double (`--tts-first-byte-ms`). Each caller speaks flite-made utterances as 8 kHz μ-law in real-time 20 ms frames
 * (some with a pause mid-sentence, some ending with a question), plays the agent audio like Twilio (marks echoed as
 * played, `clear` flushes) and, on its last turn, barges in one second into a long answer. Reports latency, false
 * cut-ins, preemptive replies and the platform's CPU per call, each next to its target.
 */
import { availableParallelism } from 'node:os';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startDeepgramLiveDouble } from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import { startCartesiaDouble } from '../../support/doubles/cartesia.ts';
import { startOpenAiChatDouble } from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { fliteUtterance, tokenFromTwiml, wsUrl } from '../../support/realtime/helpers.ts';
import { startBenchPlatform, voiceBenchEnv } from '../lib/bench-platform.ts';
import { printReport, type Final } from './report.ts';
import { runSweep, SUMMARY_PREFIX, type SweepSummary } from './sweep.ts';
import { trimSilence } from '../../shared/kernel/audio/trim-silence.ts';
import { BARGE_IN, BARGE_Q, LONG, pauseMs, pct, REPLY, utterance, UTTERANCES } from './script.ts';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '50' },
    turns: { type: 'string', default: '4' },
    tts: { type: 'string', default: 'local' },
    'tts-first-byte-ms': { type: 'string', default: '150' },
    // `double`: the Deepgram live double with the profile below; `local`: the platform's own streaming recogniser
    // (pocketsphinx on ps-stream workers, issue 32), with no STT vendor at all; callers then speak flite's kal16
    // voice, which it hears best, so that the turn detector works on real words.
    stt: { type: 'string', default: 'double' },
    'stt-final-ms': { type: 'string', default: '150' },
    // What a hosted STT does on a real network (issue 25): final jitter (±ms), word error rate (0–1, seeded),
    // interims that lag the audio (ms; 0 = the paced model's on-time interims).
    'stt-jitter-ms': { type: 'string', default: '0' },
    'stt-wer': { type: 'string', default: '0' },
    'stt-interim-lag-ms': { type: 'string', default: '0' },
    'stt-seed': { type: 'string', default: '1' },
    // The issue-25 table: STT final 150/300/500/800 ms × LLM first token 250/700 ms, one run per profile.
    sweep: { type: 'boolean', default: false },
    'sweep-stt-ms': { type: 'string', default: '150,300,500,800' },
    'sweep-llm-ms': { type: 'string', default: '250,700' },
    'llm-first-token-ms': { type: 'string', default: '250' },
    'llm-tokens-per-s': { type: 'string', default: '60' },
    'ramp-ms': { type: 'string', default: '100' },
    endpointing: { type: 'string', default: '300' },
    // Platform processes sharing the port (node:cluster); default one per core, as `PROCESSES` on a machine.
    processes: { type: 'string', default: String(availableParallelism()) },
    // Admission control on, with this many calls for the whole platform (0 = off): calls past it are refused
    // (busy TwiML) and counted, not failed. bench:capacity's admission mode uses it.
    'admission-capacity': { type: 'string', default: '0' },
    // Write V8 CPU profiles of the platform processes (the primary and each cluster copy) into this folder, to compare
    // self time per function between commits (README, "CPU per call, profiled"). Off by default: it costs CPU.
    'cpu-prof': { type: 'string' },
  },
});
const ADMISSION_CAPACITY = Number(args['admission-capacity']);
if (args.sweep) {
  await runSweep(process.argv.slice(2), args['sweep-stt-ms'], args['sweep-llm-ms']);
  process.exit(0);
}
const CALLS = Number(args.calls);
const TURNS = Math.max(2, Number(args.turns));
const VENDOR_TTS = args.tts === 'vendor';
if (!['local', 'vendor'].includes(args.tts)) throw new Error('--tts is local or vendor');
if (!['double', 'local'].includes(args.stt)) throw new Error('--stt is double or local');
const LOCAL_STT = args.stt === 'local';
if (!(Number(args['stt-wer']) >= 0 && Number(args['stt-wer']) < 1)) throw new Error('--stt-wer is a rate in [0, 1)');
const PROFILE = {
  sttFinalAfterMs: Number(args['stt-final-ms']),
  sttJitterMs: Number(args['stt-jitter-ms']),
  sttWer: Number(args['stt-wer']),
  sttInterimLagMs: Number(args['stt-interim-lag-ms']),
  llmFirstTokenMs: Number(args['llm-first-token-ms']),
  llmTokensPerSecond: Number(args['llm-tokens-per-s']),
};

async function main(): Promise<void> {
  // Vendor doubles with the declared latency profiles.
  const dg = await startDeepgramLiveDouble({
    script: (_c, u) => utterance(u, TURNS),
    finalAfterMs: PROFILE.sttFinalAfterMs,
    interimEveryMs: 100,
    finalJitterMs: PROFILE.sttJitterMs,
    wordErrorRate: PROFILE.sttWer,
    interimLagMs: PROFILE.sttInterimLagMs,
    seed: Number(args['stt-seed']),
  });
  // A vendor TTS with a latency profile; about 65 ms of speech per character, as flite's voices speak.
  const ttsDouble = VENDOR_TTS
    ? await startCartesiaDouble({ firstByteMs: Number(args['tts-first-byte-ms']), msPerChar: 65 })
    : null;
  const llm = await startOpenAiChatDouble(
    (body) => {
      const last = (body.messages as Array<{ content: string }>).at(-1)?.content ?? '';
      return { text: /opening hours/i.test(last) ? LONG : REPLY };
    },
    { key: 'sk-test-realtime', firstTokenMs: PROFILE.llmFirstTokenMs, tokensPerSecond: PROFILE.llmTokensPerSecond },
  );

  // Cluster copies inherit the primary's execArgv, so the profiler flags reach every platform process.
  const profile = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']] : [];
  const srv = await startBenchPlatform<Final>(
    {
      ...voiceBenchEnv(dg, llm, args.processes),
      REALTIME_ENDPOINTING_MS: args.endpointing,
      REALTIME_RECORDINGS: 'true',
      ...(LOCAL_STT
        ? { REALTIME_PHONE_STT_PROVIDER: 'default', DEEPGRAM_API_KEY: '', SPEECH_LM_AUTO_BUILD: 'true' }
        : {}),
      REALTIME_ADMISSION: ADMISSION_CAPACITY > 0 ? 'true' : 'false',
      ...(ADMISSION_CAPACITY > 0
        ? { REALTIME_MAX_SESSIONS: String(Math.ceil(ADMISSION_CAPACITY / Math.max(1, Number(args.processes)))) }
        : {}),
      ...(ttsDouble
        ? { BENCH_TTS_PROVIDER: 'cartesia', CARTESIA_BASE_URL: ttsDouble.url, CARTESIA_API_KEY: ttsDouble.key }
        : {}),
    },
    profile,
  );
  // Bounded in time whatever happens: a stuck run is stopped and reported as such.
  const watchdog = setTimeout(
    () => {
      console.error('voice-latency: watchdog: the run took too long; stopping');
      srv.child.kill('SIGKILL');
      process.exit(2);
    },
    (300 + (CALLS * Number(args['ramp-ms'])) / 1000 + TURNS * 60) * 1000,
  );
  watchdog.unref();

  const audio = new Map<string, Buffer>();
  for (const t of [...UTTERANCES.flatMap((u) => u.split(' | ')), BARGE_Q, BARGE_IN])
    audio.set(t, trimSilence(await fliteUtterance(t, 8000, LOCAL_STT ? 'kal16' : undefined)));
  /** The caller's audio for a turn: its segments with the call's pause between them. */
  const speech = (text: string, pause: number) =>
    Buffer.concat(
      text
        .split(' | ')
        .flatMap((seg, j) => (j === 0 ? [audio.get(seg)!] : [Buffer.alloc(16 * pause), audio.get(seg)!])),
    );
  const byTurn: number[][] = [];
  let pauses = 0;
  let cutIns = 0;

  const firstResponse: number[] = [];
  const turn: number[] = [];
  const greeting: number[] = [];
  const clearAfterOnset: number[] = [];
  const sessionIds: string[] = [];
  let failures = 0;
  let rejected = 0;

  async function call(i: number): Promise<void> {
    await new Promise((r) => setTimeout(r, i * Number(args['ramp-ms'])));
    const res = await fetch(`${srv.url}/v1/sessions/twilio`, {
      method: 'POST',
      headers: { authorization: `Bearer ${srv.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agentId: srv.agentId, from: `+1555000${String(i).padStart(4, '0')}`, to: '+15559990000' }),
    });
    const body = (await res.json()) as { twiml: string; sessionId: string; admitted?: boolean };
    // Refused by admission control (busy TwiML): a call the platform declined, not a failed one.
    if (body.admitted === false) return void rejected++;
    sessionIds.push(body.sessionId);
    const c = new TwilioCaller({
      url: wsUrl(srv.url, '/v1/sessions/twilio/stream'),
      token: tokenFromTwiml(body.twiml),
    });
    const started = performance.now();
    try {
      await talk(c, started, i);
    } finally {
      c.stop();
      c.close();
    }
  }

  async function talk(c: TwilioCaller, started: number, i: number): Promise<void> {
    await c.start();
    await c
      .until(() => c.media.length > 0, 30_000)
      .catch((e: Error) => {
        throw new Error(`no greeting (${e.message}; closed ${c.closeCode} ${c.closeReason})`);
      });
    greeting.push(c.media[0]!.at - started);
    // A reply is over when nothing plays and no agent audio came for 600 ms (its sentences arrive one by one).
    const quiet = () => !c.playing && performance.now() - (c.media.at(-1)?.at ?? 0) > 600;
    await c.until(() => c.marksEchoed.length >= 1 && quiet(), 30_000);
    for (let k = 0; k < TURNS; k++) {
      const barge = k === TURNS - 1;
      const text = utterance(k, TURNS);
      const n = c.media.length;
      const marks = c.marksEchoed.length;
      const paused = text.split(' | ').length - 1;
      const end = await c.say(speech(text, pauseMs(i, k)));
      pauses += paused;
      if (paused && c.media.slice(n).some((m) => m.at < end)) {
        // The agent spoke while the caller had only paused: a false cut-in (not a latency sample).
        cutIns++;
        const tail = text.split(' | ').at(-1)!;
        const pauseStart = end - audio.get(tail)!.length / 16 - pauseMs(i, k);
        const first = c.media.slice(n).find((m) => m.at < end)!;
        console.error(
          `false cut-in: call ${i} turn ${k} pause ${pauseMs(i, k)} ms: agent audio ${Math.round(first.at - pauseStart)} ms into the pause`,
        );
        await c.until(quiet, 30_000);
        continue;
      }
      await c.until(() => c.media.length > n, 30_000);
      const lat = c.media[n]!.at - end;
      (k === 0 ? firstResponse : turn).push(lat);
      (byTurn[k] ??= []).push(lat);
      if (!barge) {
        await c.until(() => c.marksEchoed.length > marks && quiet(), 30_000);
        continue;
      }
      // Barge in one second into the long answer.
      const t = c.media[n]!.at;
      await c.until(() => performance.now() - t >= 1000, 5000).catch(() => {});
      const clears = c.clears.length;
      const starts = c.speechStarts.length;
      void c.say(audio.get(BARGE_IN)!);
      await c.until(() => c.clears.length > clears, 10_000);
      clearAfterOnset.push(c.clears[clears]! - c.speechStarts[starts]!);
      // The barge-in utterance gets its own answer.
      const m2 = c.media.length;
      await c.until(() => c.media.length > m2, 15_000);
      await c.until(quiet, 30_000);
    }
  }

  // The callers and the vendor doubles share this process: its CPU and event-loop delay say whether they, rather
  // than the platform, were the bottleneck (a late caller sends its frames late and reads replies late).
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const results = await Promise.allSettled(Array.from({ length: CALLS }, (_, i) => call(i)));
  const reasons = new Map<string, number>();
  for (const r of results) {
    if (r.status !== 'rejected') continue;
    failures++;
    const why = (r.reason as Error)?.message ?? String(r.reason);
    reasons.set(why, (reasons.get(why) ?? 0) + 1);
  }
  for (const [why, n] of reasons) console.error(`failed calls: ${n} × ${why}`);
  byTurn.forEach((xs, k) =>
    console.error(`turn ${k} (${utterance(k, TURNS)}): p50 ${pct(xs, 50)} / p95 ${pct(xs, 95)} ms, n ${xs.length}`),
  );
  const wall = performance.now() - t0;
  loop.disable();
  const ownCpu = process.cpuUsage(cpu0);

  // Server-side traces: per-stage times, overhead, barge-in detection/stop.
  const stt: number[] = [];
  /** User turns: the final transcript's arrival after the caller's last speech (the STT's own delay). */
  const finalDelay: number[] = [];
  const llmFirst: number[] = [];
  const tts: number[] = [];
  const endpoint: number[] = [];
  const overhead: number[] = [];
  const serverLatency: number[] = [];
  const stop: number[] = [];
  const detect: number[] = [];
  const bleed: number[] = [];
  type Detail = {
    status: string;
    turns: Array<{
      speaker: string;
      sttMs: number;
      llmMs: number;
      ttsMs: number;
      latencyMs: number | null;
      endpointMs: number | null;
      overheadMs: number | null;
    }>;
    interruptions: Array<{ detectionMs: number; stopMs: number; bleedThroughWords: number }>;
  };
  const details = async (id: string): Promise<Detail | null> => {
    let d: Detail | null = null;
    for (let i = 0; i < 30; i++) {
      const r = await fetch(`${srv.url}/v1/observability/sessions/${id}`, {
        headers: { authorization: `Bearer ${srv.apiKey}` },
      });
      if (r.status === 200) {
        d = (await r.json()) as Detail;
        if (d.status !== 'active') break;
      }
      await new Promise((res) => setTimeout(res, 100));
    }
    return d;
  };
  const all: Array<Detail | null> = [];
  for (let k = 0; k < sessionIds.length; k += 20)
    all.push(...(await Promise.all(sessionIds.slice(k, k + 20).map(details))));
  for (const d of all) {
    if (!d) continue;
    for (const t of d.turns) {
      if (t.speaker === 'user') finalDelay.push(t.sttMs);
      if (t.speaker !== 'assistant' || t.latencyMs === null) continue;
      serverLatency.push(t.latencyMs);
      stt.push(t.sttMs);
      llmFirst.push(t.llmMs);
      tts.push(t.ttsMs);
      if (t.endpointMs !== null) endpoint.push(t.endpointMs);
      if (t.overheadMs !== null) overhead.push(t.overheadMs);
    }
    for (const i of d.interruptions) {
      stop.push(i.stopMs);
      detect.push(i.detectionMs);
      bleed.push(i.bleedThroughWords);
    }
  }

  const fin = await srv.stop();
  await dg.close();
  await llm.close();
  await ttsDouble?.close();
  printReport({
    header: [
      `\nvoice-latency: ${CALLS} concurrent calls × ${TURNS} turns on ${cpus().length} cores, ${args.processes} platform process(es), ${Math.round(wall / 1000)} s, ${failures} failed calls`,
      `profiles: ${LOCAL_STT ? 'STT local (pocketsphinx, streaming: real; callers speak flite kal16)' : `STT final ${PROFILE.sttFinalAfterMs} ms after end of speech ± ${PROFILE.sttJitterMs} ms, WER ${(100 * PROFILE.sttWer).toFixed(0)} %, interims ${PROFILE.sttInterimLagMs ? `${PROFILE.sttInterimLagMs} ms behind` : 'on time'} (deepgram double)`}; LLM first token ${PROFILE.llmFirstTokenMs} ms then ${PROFILE.llmTokensPerSecond} tokens/s (openai double); TTS ${VENDOR_TTS ? `vendor double (cartesia protocol, first byte ${args['tts-first-byte-ms']} ms)` : 'local flite (real)'}; endpointing ${args.endpointing} ms fixed, adaptive per the platform defaults`,
      ...(ADMISSION_CAPACITY > 0
        ? [
            `admission control: capacity ${ADMISSION_CAPACITY} calls; ${CALLS - rejected} accepted, ${rejected} refused (busy)`,
          ]
        : []),
      `load average at the end: ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
      `callers and vendor doubles (this process): user ${(ownCpu.user / 1e6).toFixed(1)} s, system ${(ownCpu.system / 1e6).toFixed(1)} s; event-loop delay p50 ${(loop.percentile(50) / 1e6).toFixed(0)} / p99 ${(loop.percentile(99) / 1e6).toFixed(0)} / max ${(loop.max / 1e6).toFixed(0)} ms\n`,
    ],
    calls: CALLS,
    failures,
    vendorTts: VENDOR_TTS,
    rows: [
      ['greeting: call start → first agent audio', greeting],
      ['first response: last speech → first audio', firstResponse, 'p95 < 1500 (contract), ≤ 600 at 50 (issue)'],
      ['turn: last speech → first audio', turn, 'p95 < 900 (contract), ≤ 450 at 50 (issue)'],
      ['  server view: last speech → first audio', serverLatency],
      ['  endpointing wait (VAD silence)', endpoint],
      ['  STT wait after endpoint', stt],
      ['STT final transcript after end of speech', finalDelay, LOCAL_STT ? 'p95 ≤ 300 at 50 (issue 32)' : undefined],
      ['  LLM first token', llmFirst],
      ['  TTS first audio', tts],
      ['  platform overhead', overhead, 'p95 ≤ 20'],
      ['barge-in: detection (onset → decision)', detect],
      ['barge-in: stop (decision → clear sent, LLM/TTS cancelled)', stop, 'p95 ≤ 150'],
      ['barge-in: caller onset → clear received', clearAfterOnset],
      ['barge-in: bleed-through words', bleed],
    ],
    pauses,
    cutIns,
    firstResponse,
    turn,
    final: fin,
  });
  // One machine-readable line for bench:capacity (benchmarks/capacity/run.ts).
  console.log(
    `BENCH_RESULT ${JSON.stringify({ calls: CALLS, rejected, failures, turnP95: pct(turn, 95), firstResponseP95: pct(firstResponse, 95), cores: cpus().length })}`,
  );
  // One line for the sweep (sweep.ts) to read.
  console.log(
    SUMMARY_PREFIX +
      JSON.stringify({
        failures,
        turn,
        firstResponse,
        endpoint,
        pauses,
        cutIns,
        prepared: fin?.prepared ?? null,
        dropped: fin?.dropped ?? null,
        droppedLlmTokens: fin?.droppedLlmTokens ?? null,
      } satisfies SweepSummary),
  );
  process.exit(failures ? 1 : 0);
}

await main();
