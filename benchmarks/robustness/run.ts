import { loadavg, cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { PocketsphinxSttEngine } from '../../shared/engines/stt/pocketsphinx.ts';
import { SileroVad } from '../../shared/engines/vad/silero.ts';
import { NOISE_TYPES, type NoiseType } from '../../shared/kernel/audio/noise.ts';
import { pct } from '../voice-latency/script.ts';
import { fliteSpeech, realSpeech, type Utterance } from './corpus.ts';
import { directTurn, makeCall, RATE, type Call } from './line.ts';
import { wordErrorRate as wer } from '../../shared/kernel/text/word-errors.ts';
import { INTERRUPTION_DETECTORS } from '../../shared/contracts/turn-seams.ts';
import { replayBargeIns, type ChainEvent } from './barge-in.ts';
import { PUNCTUATIONS, spreadWords, streamingTranscripts, type Punctuation } from './stt-timeline.ts';
import { replayTurnPath, type TurnDetectorName } from './turn-path.ts';
import { turnPathOutcome } from './turn-outcome.ts';

/**
 * bench:robustness (issue 31): the platform's caller-audio chain — its input processors (none, or `rnnoise`), the
 * VAD stage with the line's noise floor and the real Silero model, the turn detector at the platform's defaults
 * (threshold 0.5, 60 ms to start, 300 ms endpointing, barge-in after 200 ms of speech) — on calls made of real read
 * speech (pocketsphinx's LibriVox and card-reading recordings, fetched from its Debian source package) and flite
 * voices, under seeded line noise of every kind at each SNR, through μ-law and 0–3 % packet loss; and the local STT
 * (pocketsphinx) on the caller's turn as the chain passes it on. The audio is fed as fast as the chain takes it (not
 * in real time): the times are audio time, so they do not depend on the machine's load; CPU is what the chain used.
 */
// The realtime role's stages, loaded as a role is (a dynamic import: only processes that run it load it).
const { StageHarness } = await import('../../workers/realtime/pipeline/harness.ts');
const { InputStage } = await import('../../workers/realtime/pipeline/input/input-stage.ts');
const { RnnoiseSuppressor } = await import('../../workers/realtime/pipeline/input/rnnoise.ts');
const { VadStage } = await import('../../workers/realtime/pipeline/input/vad-stage.ts');
const { interruptionDetector } = await import('../../workers/realtime/pipeline/turn/interruption-registry.ts');
type Frame = Parameters<InstanceType<typeof VadStage>['push']>[0];

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '3' },
    types: { type: 'string', default: NOISE_TYPES.join(',') },
    snrs: { type: 'string', default: '30,20,15,10,5' },
    'wer-calls': { type: 'string', default: '1' },
    rnnoise: { type: 'string', default: 'off,on' },
    seed: { type: 'string', default: '31' },
    interruption: { type: 'string', default: 'default,line-contrast' },
    'stt-lag-ms': { type: 'string', default: '200' },
    'babble-words': { type: 'string', default: 'off' },
    'sound-onset': { type: 'string', default: 'on' },
    utterances: { type: 'string', default: 'spread' },
    'turn-detectors': { type: 'string', default: 'default' },
    'stt-final-gap-ms': { type: 'string', default: '200' },
    'stt-punctuation': { type: 'string', default: 'end' },
    'list-calls': { type: 'string', default: 'off' },
  },
});
const CALLS = Math.max(1, Math.min(200, Number(args.calls)));
const TYPES = args.types.split(',').filter((t): t is NoiseType => (NOISE_TYPES as readonly string[]).includes(t));
const SNRS = args.snrs.split(',').map(Number).filter(Number.isFinite);
const WER_CALLS = Math.max(0, Number(args['wer-calls']));
const SUPPRESS = args.rnnoise.split(',').map((x) => x === 'on');
const SEED = Number(args.seed) || 31;
if (TYPES.length === 0 || SNRS.length === 0) throw new Error(`--types from ${NOISE_TYPES.join(',')}; --snrs numbers`);
type InterruptionName = keyof typeof INTERRUPTION_DETECTORS;
const INTERRUPTIONS = args.interruption
  .split(',')
  .filter((n): n is InterruptionName => Object.keys(INTERRUPTION_DETECTORS).includes(n));
const STT_LAG_MS = Math.max(0, Number(args['stt-lag-ms']) || 0);
/** What a streaming STT makes of background voices: nothing (off), or words (on: their words come as the caller's). */
const BABBLE_WORDS = args['babble-words'] === 'on';
/**
 * Which utterance call k of row ci reads: `spread` walks the whole corpus in every row (50 calls: each of the 14
 * utterances 3–4 times); `paired`, the rule before 2026-11-29 13:00, took `(7k + 3ci) mod 14`, only two utterances
 * per row (which two depended on the row's place in the run), so a row's rates were two recordings' rates.
 */
const PAIRED = args.utterances === 'paired';
/** The turn detectors whose turn-end path (turn-path.ts) is replayed: the third table's rows; `off` for none. */
const TURN_DETECTORS = args['turn-detectors']
  .split(',')
  .filter((n): n is TurnDetectorName => n === 'default' || n === 'entity-hold');
/** The pause after which the simulated streaming STT sends a final (its own endpointing), and whether it ends it with a full stop. */
const STT_FINAL_GAP_MS = Math.max(0, Number(args['stt-final-gap-ms']) || 0);
const STT_PUNCTUATE: Punctuation = PUNCTUATIONS.find((p) => p === args['stt-punctuation']) ?? 'end';
/** Prints each call the turn-end path missed or cut (noisy or not), with its turns: for before/after call by call. */
const LIST_CALLS = args['list-calls'] === 'on';

/** The platform's defaults (workers/realtime/call/bootstrap.ts, REALTIME_* in docs/env.md). */
const VAD = { threshold: 0.5, startMs: 60, endpointMs: 300 };
const BARGE_IN_MIN_MS = 200;
const BARGE_IN_FORCE_MS = 900;
/**
 * Where a detector counts `minMs` from: the sound's onset (`on`, the turn stage's way), or the VAD's (`off`, the
 * way before it: for a before/after in one run, `--sound-onset off,on`).
 */
const SOUND_ONSET = args['sound-onset'].split(',').map((x) => x !== 'off');
/** Each interruption detector, once per way of counting: the barge-in table's rows. */
const detectors = INTERRUPTIONS.flatMap((name) =>
  SOUND_ONSET.map((soundOnset) => ({
    label: SOUND_ONSET.length > 1 && !soundOnset ? `${name} (VAD onset)` : name,
    soundOnset,
    detector: interruptionDetector({ bargeInMinMs: BARGE_IN_MIN_MS, bargeInForceMs: BARGE_IN_FORCE_MS }, { name }),
  })),
);

interface Speech {
  onsetMs: number;
  /** End of its last speech frame; null while it runs to the end of the call. */
  lastSpeechMs: number | null;
  endAtMs: number | null;
}

interface Outcome {
  bargeIns: number;
  agentUtterances: number;
  missed: boolean;
  earlyEnds: number;
  latencyMs: number | null;
  cpuMs: number;
  audioS: number;
  /** Per interruption detector: the barge-in path replayed over the VAD's output (barge-in.ts). */
  bargeIn: Array<{ falseBargeIns: number; stopMs: number | null }>;
  /** The input processors' delay (ms): the chain's output time is the line's plus this. */
  delayMs: number;
}

const silero = new SileroVad().atRate(RATE)!;

/** Runs one call's frames through the chain; speech runs as the VAD reported them, and what the chain passed on. */
async function runChain(
  call: Call,
  suppress: boolean,
): Promise<{ speech: Speech[]; cpuMs: number; out: Buffer[]; delayMs: number; events: ChainEvent[] }> {
  const rn = suppress ? new RnnoiseSuppressor(RATE) : null;
  const input = rn ? new StageHarness(new InputStage([rn])) : null;
  const vad = new VadStage(silero, RATE, VAD);
  const h = new StageHarness(vad);
  const out: Buffer[] = [];
  const frameMs = (silero.frameSamples / RATE) * 1000;
  const scored = () => h.out.filter((f) => f.kind === 'vad-frame').length;
  const t0 = process.cpuUsage();
  for (let i = 0; i < call.frames.length; i += 8) {
    for (let k = i; k < Math.min(call.frames.length, i + 8); k++) {
      let f: Frame = { kind: 'audio-in', pcm: call.frames[k]!, sampleRate: RATE, atMs: k * 20 };
      if (input) {
        input.out.length = 0;
        input.push(f);
        f = input.out[0]!;
      }
      if (f.kind === 'audio-in') out.push(f.pcm);
      h.push(f);
    }
    const want = Math.floor((Math.min(call.frames.length, i + 8) * 20) / frameMs);
    await h.until(() => scored() >= want, 60_000);
  }
  const used = process.cpuUsage(t0);
  rn?.close();
  const speech: Speech[] = [];
  for (const f of h.out) {
    if (f.kind === 'speech-start') speech.push({ onsetMs: f.atMs, lastSpeechMs: null, endAtMs: null });
    else if (f.kind === 'speech-end' && speech.length > 0) {
      speech.at(-1)!.lastSpeechMs = f.lastSpeechMs;
      speech.at(-1)!.endAtMs = f.atMs;
    }
  }
  return { speech, cpuMs: (used.user + used.system) / 1000, out, delayMs: rn?.delayMs ?? 0, events: h.out };
}

/**
 * One call's figures. `lastMs`: where the caller's last word ends, as the VAD hears it on the same call without the
 * noise (read speech fades into its recording's own hiss: an energy threshold puts the end anywhere in the fade); a
 * clean call measures itself, and falls back to the last voiced sample.
 */
async function measure(
  call: Call,
  suppress: boolean,
  words: { caller: string; noise: string },
  ref?: { lastMs: number },
): Promise<Outcome & { lastMs: number }> {
  const { speech, cpuMs, delayMs, events } = await runChain(call, suppress);
  const end = call.frames.length * 20;
  // The chain delays the audio by the processors' delay: the landmarks move with it.
  const onset = call.onsetMs + delayMs;
  const overlaps = (s: Speech, until: number) => s.onsetMs < until && (s.lastSpeechMs ?? end) > onset - 200;
  const last =
    ref?.lastMs ??
    Math.max(0, ...speech.filter((s) => overlaps(s, call.endMs + delayMs)).map((s) => s.lastSpeechMs ?? 0));
  const lastWord = last > onset ? last : call.endMs + delayMs;
  // Where the caller's speech begins, as the VAD hears it without the noise (a recording's lead-in is not speech).
  // Where a caller's barge-in begins: the first voiced sample (the VAD scores a soft onset as speech later).
  const firstMs = call.voicedMs + delayMs;
  let bargeIns = 0;
  for (const [from, to] of call.agent) {
    const a = from + delayMs;
    const b = to + delayMs;
    const barged = speech.some(
      (s) => s.onsetMs >= a && s.onsetMs < b && (s.lastSpeechMs ?? end) - s.onsetMs >= BARGE_IN_MIN_MS,
    );
    if (barged) bargeIns++;
  }
  const turn = speech.filter((s) => overlaps(s, lastWord));
  // A turn end the caller went on after (more of the turn's speech follows it) cut the caller off; the turn's last
  // end is where the turn was taken (noise that hides the last word's fade moves it earlier, not into a cut-in).
  const earlyEnds = turn.filter((s, i) => s.endAtMs !== null && i < turn.length - 1).length;
  const ending = turn.at(-1)?.endAtMs !== null ? turn.at(-1) : undefined;
  return {
    bargeIns,
    agentUtterances: call.agent.length,
    // Missed: never heard, or never ended (the VAD still in speech 3 s after the last word: no reply would come).
    missed: turn.length === 0 || !ending || ending.endAtMs! > lastWord + 3000,
    earlyEnds,
    latencyMs: ending ? ending.endAtMs! - lastWord : null,
    cpuMs,
    audioS: end / 1000,
    lastMs: lastWord,
    delayMs,
    bargeIn: detectors.map((d) =>
      replayBargeIns(
        events,
        call,
        { delayMs, callerOnsetMs: firstMs },
        d.detector,
        { ...words, lagMs: STT_LAG_MS },
        { soundOnset: d.soundOnset },
      ),
    ),
  };
}

interface Row {
  bargeIns: number;
  agentUtterances: number;
  turns: number;
  missed: number;
  falseCutIns: number;
  latencies: number[];
  cpuMsPerCall: number[];
  cpuPctOfCore: number[];
  wer: number[];
  /** Per interruption detector: false barge-ins, the real barge-ins' stop times, barge-ins never stopped for. */
  bargeIn: Array<{ falseBargeIns: number; stops: number[]; missed: number }>;
  /** Per turn detector: the turn-end path (turn-path.ts). */
  turnPath: Array<{ missed: number; falseCutIns: number; cleanCutIns: number; latencies: number[] }>;
}
const newRow = (): Row => ({
  bargeIns: 0,
  agentUtterances: 0,
  turns: 0,
  missed: 0,
  falseCutIns: 0,
  latencies: [],
  cpuMsPerCall: [],
  cpuPctOfCore: [],
  wer: [],
  bargeIn: detectors.map(() => ({ falseBargeIns: 0, stops: [], missed: 0 })),
  turnPath: TURN_DETECTORS.map(() => ({ missed: 0, falseCutIns: 0, cleanCutIns: 0, latencies: [] })),
});

const stt = new PocketsphinxSttEngine({ maxConcurrent: 2 });
/** The local STT's words for a direct (16 kHz) caller turn, through rnnoise first when `suppress`. */
async function transcribe(x: Int16Array, suppress: boolean): Promise<string> {
  let samples = x;
  if (suppress) {
    const rn = new RnnoiseSuppressor(16000);
    const out = new Int16Array(x.length);
    for (let off = 0; off < x.length; off += 320) out.set(rn.process(x.subarray(off, off + 320)), off);
    rn.close();
    samples = out;
  }
  const r = await stt.transcribe({
    pcm: Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength),
    sampleRate: 16000,
    language: 'en',
    mode: 'fast',
    timestamps: 'segment',
    diarize: false,
  });
  return r.text;
}

const NO_WORDS = { caller: '', noise: '' };

async function main(): Promise<void> {
  const started = performance.now();
  const corpus: Utterance[] = [...(await realSpeech()), ...(await fliteSpeech())];
  const lines: string[] = [];
  const say = (s: string) => (lines.push(s), console.log(s));
  say(
    `bench:robustness — ${corpus.length} caller utterances (${corpus.filter((u) => u.source !== 'flite').length} real read speech from pocketsphinx's Debian source, ${corpus.filter((u) => u.source === 'flite').length} flite voices); ` +
      `${CALLS} calls per noise type and SNR, seed ${SEED}; rnnoise ${SUPPRESS.map((s) => (s ? 'on' : 'off')).join('/')}; ` +
      `interruption ${INTERRUPTIONS.join('/')}, STT words ${STT_LAG_MS} ms after the speech began, ` +
      `background voices' words ${BABBLE_WORDS ? 'on' : 'off'}; ${cpus().length} cores, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  const conditions: Array<{ type: NoiseType | null; snr: number }> = [
    { type: null, snr: Infinity },
    ...TYPES.flatMap((type) => SNRS.map((snr) => ({ type, snr }))),
  ];
  // One call first, not counted: the model's first inference and the code's first run cost more than a call's.
  for (const suppress of SUPPRESS)
    await measure(makeCall(corpus[0]!, { type: null, snrDb: 0, seed: 1, voices: [] }), suppress, NO_WORDS);
  const rows = new Map<string, Row>();
  const werJobs: Array<Promise<void>> = [];
  for (const [ci, c] of conditions.entries()) {
    process.stderr.write(
      `  ${c.type ?? 'clean'} ${Number.isFinite(c.snr) ? `${c.snr} dB` : ''} (${ci + 1}/${conditions.length}, ${((performance.now() - started) / 1000).toFixed(0)} s)\n`,
    );
    for (let k = 0; k < CALLS; k++) {
      const u = corpus[((PAIRED ? k * 7 : k) + ci * 3) % corpus.length]!;
      const others = corpus.filter((v) => v !== u).slice(0, 4);
      const voices16 = others.map((v) => v.samples16);
      const voices = others.map((v) => v.samples);
      const seed = (SEED * 1_000_003 + ci * 1009 + k) >>> 0;
      const call = makeCall(u, { type: c.type, snrDb: c.snr, seed, voices });
      // The same call without the noise: a turn end there is the caller's own pause, not the line's doing.
      const clean = c.type ? makeCall(u, { type: null, snrDb: c.snr, seed, voices }) : call;
      for (const suppress of SUPPRESS) {
        const key = `${c.type ?? 'clean'}|${c.snr}|${suppress ? 'on' : 'off'}`;
        const row = rows.get(key) ?? newRow();
        rows.set(key, row);
        // The caller's first two words ("wait, stop" is two), and the background voices' when the STT hears them.
        const words = {
          caller: u.text.split(' ').slice(0, 2).join(' '),
          noise: c.type === 'babble' && BABBLE_WORDS ? others[0]!.text.split(' ').slice(0, 3).join(' ') : '',
        };
        const ref = await measure(clean, suppress, { ...words, noise: '' });
        const o = clean === call ? ref : await measure(call, suppress, words, ref);
        row.bargeIns += o.bargeIns;
        row.agentUtterances += o.agentUtterances;
        row.turns++;
        if (o.missed) row.missed++;
        if (o.earlyEnds > ref.earlyEnds) row.falseCutIns++;
        if (o.latencyMs !== null) row.latencies.push(o.latencyMs);
        row.cpuMsPerCall.push(o.cpuMs);
        for (const [i, b] of o.bargeIn.entries()) {
          const acc = row.bargeIn[i]!;
          acc.falseBargeIns += b.falseBargeIns;
          if (b.stopMs === null) acc.missed++;
          else acc.stops.push(b.stopMs);
        }
        row.cpuPctOfCore.push((o.cpuMs / 10 / o.audioS) * 1);
        // The caller's words as a streaming STT would send them, timed over the recording's voiced stretches; the
        // last ends where the clean call's VAD hears the last word end (a fade under 20 dB is still the word).
        const spans = call.voiced.map(([a, b]) => [a + ref.delayMs, b + ref.delayMs] as [number, number]);
        if (spans.length > 0) spans.at(-1)![1] = Math.max(spans.at(-1)![1], ref.lastMs);
        const transcripts = streamingTranscripts(spreadWords(u.text, spans), {
          lagMs: STT_LAG_MS,
          finalGapMs: STT_FINAL_GAP_MS,
          punctuate: STT_PUNCTUATE,
        });
        for (const [i, detector] of TURN_DETECTORS.entries()) {
          const replay = async (x: Call) => {
            const handed = await replayTurnPath(x, silero, RATE, { suppress, detector, transcripts });
            return { handed, ...turnPathOutcome(handed, call.onsetMs + ref.delayMs, ref.lastMs) };
          };
          const cleanPath = await replay(clean);
          const path = clean === call ? cleanPath : await replay(call);
          const acc = row.turnPath[i]!;
          if (path.missed) acc.missed++;
          if (path.earlyEnds > cleanPath.earlyEnds) acc.falseCutIns++;
          // Handed on mid-turn on the line without noise too: not the noise's doing, but a cut all the same (the
          // flite callers' 250 ms pause is shorter than any window; a reader's pause between cards is not an end).
          if (cleanPath.earlyEnds > 0) acc.cleanCutIns++;
          if (path.latencyMs !== null) acc.latencies.push(path.latencyMs);
          if (LIST_CALLS && (path.missed || path.earlyEnds > 0 || cleanPath.earlyEnds > 0)) {
            const turns = (p: typeof path) => p.handed.map((h) => `${h.onsetMs}–${h.lastSpeechMs}@${h.atMs}`).join(' ');
            say(
              `call ${key} ${detector} #${k} ${u.id}: last word ${ref.lastMs}; handed on (onset–last speech@at) ` +
                `noisy ${turns(path) || 'none'}, without noise ${turns(cleanPath) || 'none'}`,
            );
          }
        }
        if (k < WER_CALLS)
          werJobs.push(
            transcribe(directTurn(u, { type: c.type, snrDb: c.snr, seed, voices, voices16 }), suppress).then(
              (text) => void row.wer.push(wer(u.text, text)),
              (e: Error) => console.error(`stt failed: ${e.message}`),
            ),
          );
        // Keep at most two decoders busy: the VAD runs meanwhile.
        if (werJobs.length >= 2) await Promise.all(werJobs.splice(0));
      }
    }
  }
  await Promise.all(werJobs);
  printTable(rows, conditions, say);
  printBargeIns(rows, conditions, say);
  if (TURN_DETECTORS.length > 0) printTurnPath(rows, conditions, say);
  say(`wall ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

const FOOTER = [
  'targets (issue 31), at every noise type with SNR ≥ 10 dB: false barge-ins ≤ 1 % of agent utterances, missed caller',
  'turns 0, false cut-ins ≤ 2 %; at 5 dB: reported, no target. All figures are the VAD stage’s (Silero with the',
  'line’s noise floor, the platform’s defaults), before the turn stage’s transcript-aware windows and barge-in rule.',
  '- false barge-in: caller-silent agent speech during which the VAD heard ≥ 200 ms of speech;',
  '- missed turn: the caller’s turn never heard, or never ended (still in speech 3 s after the last word);',
  '- false cut-in: a turn the VAD ended before the caller went on, more often than on the same call without noise;',
  '- turn p95: audio time from the last word (where the VAD hears it end without the noise) to the turn’s end, the',
  '  300 ms endpointing window included: not a voice-to-voice latency;',
  '- local STT WER: pocketsphinx on the same turn on a direct 16 kHz line (its model is wideband), same noise/SNR;',
  '- CPU: the chain (input processors and VAD) per call, and as a share of one core over the call’s audio time.',
];

const p = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)} %` : '-');
const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const num = (v: number, unit = '') => (Number.isFinite(v) ? `${Math.round(v)}${unit}` : '-');

/** Prints a table: its columns (title, width), its rows' cells, then its footer. */
function table(columns: Array<[string, number]>, lines: string[][], footer: string[], say: (s: string) => void): void {
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(columns[i]![1])).join(' ');
  say('');
  say(fmt(columns.map(([title]) => title)));
  for (const cells of lines) say(fmt(cells));
  say('');
  for (const line of footer) say(line);
}

type Condition = { type: NoiseType | null; snr: number };
/** Every row's key and its first three cells (noise, SNR, rnnoise), in the table's order. */
function* rowsOf(rows: Map<string, Row>, conditions: Condition[]): Generator<[Row, Condition, string[]]> {
  for (const c of conditions)
    for (const suppress of SUPPRESS) {
      const r = rows.get(`${c.type ?? 'clean'}|${c.snr}|${suppress ? 'on' : 'off'}`);
      if (r) yield [r, c, [c.type ?? 'clean', Number.isFinite(c.snr) ? `${c.snr}` : '∞', suppress ? 'on' : 'off']];
    }
}

function printTable(rows: Map<string, Row>, conditions: Condition[], say: (s: string) => void): void {
  const lines: string[][] = [];
  for (const [r, c, cells] of rowsOf(rows, conditions)) {
    const barge = r.agentUtterances ? r.bargeIns / r.agentUtterances : 0;
    const cut = r.turns ? r.falseCutIns / r.turns : 0;
    // Targets (issue 31) at SNR ≥ 10 dB: false barge-ins ≤ 1 %, missed turns 0, false cut-ins ≤ 2 %; 5 dB: report.
    const ok = barge <= 0.01 && r.missed === 0 && cut <= 0.02;
    lines.push([
      ...cells,
      `${r.turns}`,
      `${r.bargeIns}/${r.agentUtterances} (${p(r.bargeIns, r.agentUtterances)})`,
      `${r.missed}`,
      `${r.falseCutIns} (${p(r.falseCutIns, r.turns)})`,
      num(pct(r.latencies, 95), ' ms'),
      r.wer.length ? `${Math.round(100 * avg(r.wer))} %` : '-',
      num(avg(r.cpuMsPerCall), ' ms'),
      `${avg(r.cpuPctOfCore).toFixed(2)} %`,
      c.snr >= 10 ? (ok ? 'PASS' : 'FAIL') : 'report',
    ]);
  }
  const columns: Array<[string, number]> = [
    ['noise', 8],
    ['SNR', 5],
    ['rnnoise', 8],
    ['calls', 6],
    ['false barge-ins/agent utt.', 27],
    ['missed turns', 13],
    ['false cut-ins', 14],
    ['turn p95', 9],
    ['local STT WER (16 kHz)', 23],
    ['CPU/call', 9],
    ['CPU % core', 11],
    ['verdict', 8],
  ];
  table(columns, lines, FOOTER, say);
}

/**
 * The barge-in path (issue 31 item 2) per interruption detector: false barge-ins over the agent, and the caller's
 * turn taken as a barge-in ("wait, stop"): how soon after its onset the detector stops the agent.
 */
function printBargeIns(rows: Map<string, Row>, conditions: Condition[], say: (s: string) => void): void {
  const lines: string[][] = [];
  for (const [r, c, cells] of rowsOf(rows, conditions))
    for (const [i, { label: name }] of detectors.entries()) {
      const b = r.bargeIn[i]!;
      const stopP95 = pct(b.stops, 95);
      // Targets (issue 31) at SNR ≥ 10 dB: false barge-ins ≤ 1 % of agent utterances; a real barge-in stops the
      // agent within 300 ms p95 (and always).
      const ok = b.falseBargeIns <= 0.01 * r.agentUtterances && b.missed === 0 && stopP95 <= 300;
      lines.push([
        ...cells,
        name,
        `${b.falseBargeIns}/${r.agentUtterances} (${p(b.falseBargeIns, r.agentUtterances)})`,
        num(pct(b.stops, 50), ' ms'),
        num(stopP95, ' ms'),
        `${b.missed}/${r.turns}`,
        c.snr >= 10 ? (ok ? 'PASS' : 'FAIL') : 'report',
      ]);
    }
  const columns: Array<[string, number]> = [
    ['noise', 8],
    ['SNR', 5],
    ['rnnoise', 8],
    ['interruption', 27],
    ['false barge-ins/agent utt.', 27],
    ['stop p50', 9],
    ['stop p95', 9],
    ['never stopped', 14],
    ['verdict', 8],
  ];
  table(columns, lines, BARGE_IN_FOOTER, say);
}

/**
 * The turn-end path (issue 31 item 3) per turn detector, beside the VAD's own figures (the first table's): what the
 * platform's turn stage hands on when the caller's words reach it as a streaming STT's would.
 */
function printTurnPath(rows: Map<string, Row>, conditions: Condition[], say: (s: string) => void): void {
  const lines: string[][] = [];
  for (const [r, c, cells] of rowsOf(rows, conditions))
    for (const [i, name] of TURN_DETECTORS.entries()) {
      const t = r.turnPath[i]!;
      const ok = t.missed === 0 && t.falseCutIns + t.cleanCutIns <= 0.02 * r.turns;
      lines.push([
        ...cells,
        name,
        `${r.turns}`,
        `${t.missed} (VAD ${r.missed})`,
        `${t.falseCutIns} (VAD ${r.falseCutIns})`,
        `${t.cleanCutIns}`,
        `${num(pct(t.latencies, 95), ' ms')} (VAD ${num(pct(r.latencies, 95), ' ms')})`,
        c.snr >= 10 ? (ok ? 'PASS' : 'FAIL') : 'report',
      ]);
    }
  const columns: Array<[string, number]> = [
    ['noise', 8],
    ['SNR', 5],
    ['rnnoise', 8],
    ['turn detector', 14],
    ['calls', 6],
    ['missed turns', 13],
    ['false cut-ins', 14],
    ['cut without noise', 18],
    ['turn p95', 22],
    ['verdict', 8],
  ];
  table(columns, lines, TURN_PATH_FOOTER, say);
}

const TURN_PATH_FOOTER = [
  'turn-end path (issue 31 item 3): the VAD stage and the real turn stage wired as on a phone call (the turn detector',
  'named, `line-contrast`, the platform’s endpointing defaults, a vendor’s 1.2 s wait for a final), the turn stage on',
  'the audio clock (turn-path.ts). The caller’s words (the corpus transcript) are spread over the clean call’s speech',
  `by their letters (stt-timeline.ts) and reach it ${STT_LAG_MS} ms after each word ends: an interim per word, a final`,
  `after a pause of ${STT_FINAL_GAP_MS} ms or more and at the end; full stops: ${STT_PUNCTUATE} (--stt-punctuation none|end|every).`,
  'In brackets: the VAD’s own figures (first table).',
  '- missed turn: the caller’s turn never handed on, or handed on more than 3 s after the last word;',
  '- false cut-in: a turn handed on before the caller went on, more often than on the same call without noise (a turn',
  '  handed on before the last word ended is one, whether or not the rest was handed on: a cut, never a missed turn);',
  '- cut without noise: calls whose turn was handed on before the caller went on on the line without noise too;',
  '- turn p95: the last word (as the VAD hears it end without noise) → the turn handed on after it (audio time).',
  'targets at SNR ≥ 10 dB: missed turns 0, false cut-ins ≤ 2 %.',
];

const BARGE_IN_FOOTER = [
  'barge-ins (issue 31 item 2): the turn stage’s barge-in path replayed over the VAD’s output with the real interruption',
  `detector and line-level tracker (barge-in.ts); minMs ${BARGE_IN_MIN_MS}, forceMs ${BARGE_IN_FORCE_MS}; the caller’s first two words`,
  `reach it ${STT_LAG_MS} ms after their speech began; background voices' words: ${BABBLE_WORDS ? 'likewise' : 'none'}.`,
  '- false barge-in: an agent utterance (the caller silent) that the detector stopped;',
  '- stop: the caller’s turn taken as a barge-in over the agent: its sound’s onset (over the line’s floor, on the same',
  '  call without noise) → the decision (audio time, the VAD’s frame included; transport and playback flush not',
  '  included); never stopped: no decision before its end. "(VAD onset)": minMs counted from the VAD’s onset.',
  'targets at SNR ≥ 10 dB: false barge-ins ≤ 1 %; stop p95 ≤ 300 ms, every barge-in stopped.',
];

await main();
