import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWav } from '../../shared/kernel/audio/wav.ts';
import { runProcess } from '../../shared/kernel/process/spawn.ts';

/**
 * The synthetic answering sets: what the called party's line carries in the first seconds after the answer.
 * Speech comes from the local TTS engines (flite voices, espeak-ng accents and variants at several speeds), is
 * placed on a timeline with the pauses a person or a machine leaves, gets a beep where a machine would play one,
 * line noise, and goes through G.711 μ-law at 8 kHz and back, as a phone call does.
 *  - `base`: the first set (75 clips: four flite voices, two espeak-ng accents, low noise, ffmpeg's G.711 coder);
 *    kept as it was so figures compare across changes.
 *  - `wide`: more phrases (long business greetings, beepless short voicemails), eleven voices at speaking rates
 *    from 140 to 210 wpm, three noise levels (RMS ≈ 40 / 150 / 400), quieter and louder lines; the platform's own
 *    μ-law codec (the one Twilio audio goes through). Its own fixed seed.
 */
export type Kind = 'human' | 'voicemail-short' | 'voicemail-long' | 'screening';

export interface Clip {
  id: string;
  kind: Kind;
  expected: 'human' | 'machine';
  /** 8 kHz s16le samples. */
  pcm: Int16Array;
  /** Audio time (ms) the greeting's last speech ends. */
  speechEndMs: number;
  /** Beep start and end (ms), when the clip has one. */
  beep: { startMs: number; endMs: number; hz: number } | null;
}

const RATE = 8000;

const HUMAN = [
  'Hello?',
  'Hello.',
  'Hi.',
  'Yeah?',
  'Yes?',
  'Speaking.',
  'Hello, who is this?',
  'Hi, this is Sam.',
  'Hey, what is up?',
  'Good morning.',
  'Hello, Maria speaking.',
  ['Hello?', 'Hello?'],
  ['Hi.', 'Who is calling?'],
  'Good afternoon, Smith residence, how can I help you?',
];

/** The wide set's humans: the base phrases and more of the kinds that are hard (long, business-like, repeated). */
const HUMAN_WIDE: Array<string | string[]> = [
  ...HUMAN,
  'Uh, hello?',
  'Yeah, hello?',
  'Hello, this is David.',
  'Hi there, you have got Mike.',
  'Good evening, Johnson residence.',
  ['Hello?', 'Hello? Who is this?'],
  ['Yes?', 'Hello?'],
  'Thank you for calling Northside Pharmacy, this is Jenny, how can I help you?',
  'Hello, Doctor Patel office, how may I direct your call?',
  'Hi, this is Lisa, who am I speaking with?',
  'Hello, accounts department, Robert speaking.',
  'Morning, Greenfield Plumbing, what can I do for you?',
];

const VOICEMAIL_SHORT = [
  'Leave a message.',
  'Hi, it is Tom. Leave a message.',
  'You have reached Anna. Please leave a message after the tone.',
  'Not here. Leave a message.',
];

const VOICEMAIL_SHORT_WIDE = [
  ...VOICEMAIL_SHORT,
  'Please leave a message.',
  'Hi, leave a message after the beep.',
  'Sorry I missed you, leave a message.',
  'This is Joe. You know what to do.',
];

const VOICEMAIL_LONG = [
  'Hi, you have reached the voicemail of John Miller. I am not available to take your call right now. Please leave your name, number and a short message after the beep, and I will get back to you as soon as I can.',
  'The person you are calling is not available. Please leave a message after the tone. When you have finished recording, you may hang up.',
  'Thank you for calling Bright Dental. Our office is currently closed. Our hours are nine to five, Monday through Friday. Please leave a message and we will return your call.',
  'Hey, this is Kate. Sorry I missed you. Leave me a message and I will call you back.',
];

const VOICEMAIL_LONG_WIDE = [
  ...VOICEMAIL_LONG,
  'Hello, you have reached the Garcia family. We cannot come to the phone right now, but if you leave your name and number, we will call you back.',
  'Your call has been forwarded to an automated voice messaging system. The person at the number you dialed is not available. At the tone, please record your message.',
];

const SCREENING = [
  'Hi, the person you are calling is using a screening service and will get a copy of this conversation. Go ahead and say your name and why you are calling.',
  'Please state your name and the reason for your call, and I will see if this person is available.',
  'This call is being screened. Please say your name and the purpose of your call after the tone.',
];

const SCREENING_WIDE = [...SCREENING, 'Before I try to connect you, please say your name and why you are calling.'];

type Voice = { engine: 'flite'; voice: string } | { engine: 'espeak'; voice: string; speed: number };
const VOICES: Voice[] = [
  { engine: 'flite', voice: 'slt' },
  { engine: 'flite', voice: 'kal' },
  { engine: 'flite', voice: 'awb' },
  { engine: 'flite', voice: 'rms' },
  { engine: 'espeak', voice: 'en-us', speed: 165 },
  { engine: 'espeak', voice: 'en-gb', speed: 190 },
];
/** The wide set's voices: flite's five general voices and espeak-ng accents and variants from 140 to 210 wpm. */
const VOICES_WIDE: Voice[] = [
  ...VOICES,
  { engine: 'flite', voice: 'kal16' },
  { engine: 'espeak', voice: 'en-us+f3', speed: 150 },
  { engine: 'espeak', voice: 'en-gb-scotland+f2', speed: 175 },
  { engine: 'espeak', voice: 'en-gb-x-rp', speed: 210 },
  { engine: 'espeak', voice: 'en-us+m7', speed: 140 },
];
const BEEPS = [1000, 850, 1400, 440];

/** Deterministic pseudo-random numbers, so every run measures the same set. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

async function speak(text: string, v: Voice, dir: string): Promise<Int16Array> {
  const file = join(dir, 'speech.wav');
  const r =
    v.engine === 'flite'
      ? await runProcess('flite', ['-voice', v.voice, '-t', text, '-o', file], { timeoutMs: 30_000 })
      : await runProcess('espeak', ['-v', v.voice, '-s', String(v.speed), '-w', file, text], { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`${v.engine} failed: ${r.stderr.slice(-200)}`);
  const wav = parseWav(await readFile(file));
  const out = await runProcess(
    'ffmpeg',
    ['-v', 'error', '-i', file, '-ac', '1', '-ar', String(RATE), '-f', 's16le', '-'],
    { timeoutMs: 30_000 },
  );
  if (out.code !== 0 || !wav.sampleRate) throw new Error(`ffmpeg resample failed: ${out.stderr.slice(-200)}`);
  return trim(new Int16Array(out.stdout.buffer, out.stdout.byteOffset, out.stdout.length >> 1));
}

/** TTS output starts and ends with silence of its own; the timeline places speech exactly. */
function trim(x: Int16Array): Int16Array {
  let a = 0;
  let b = x.length;
  while (a < b && Math.abs(x[a]!) < 200) a++;
  while (b > a && Math.abs(x[b - 1]!) < 200) b--;
  return x.slice(a, b);
}

/** Through a phone line: μ-law at 8 kHz and back (ffmpeg's G.711 coder). */
async function phoneLine(x: Int16Array): Promise<Int16Array> {
  const pcm = Buffer.from(x.buffer, x.byteOffset, x.byteLength);
  const enc = await runProcess(
    'ffmpeg',
    ['-v', 'error', '-f', 's16le', '-ar', '8000', '-ac', '1', '-i', '-', '-f', 'mulaw', '-'],
    {
      input: pcm,
      timeoutMs: 30_000,
    },
  );
  const dec = await runProcess(
    'ffmpeg',
    ['-v', 'error', '-f', 'mulaw', '-ar', '8000', '-ac', '1', '-i', '-', '-f', 's16le', '-'],
    {
      input: enc.stdout,
      timeoutMs: 30_000,
    },
  );
  if (enc.code !== 0 || dec.code !== 0) throw new Error('ffmpeg mu-law round trip failed');
  return new Int16Array(dec.stdout.buffer.slice(dec.stdout.byteOffset, dec.stdout.byteOffset + dec.stdout.length));
}

class Timeline {
  private parts: Int16Array[] = [];
  length = 0;
  get ms(): number {
    return (this.length / RATE) * 1000;
  }
  silence(ms: number): void {
    this.add(new Int16Array(Math.round((ms / 1000) * RATE)));
  }
  add(x: Int16Array): void {
    this.parts.push(x);
    this.length += x.length;
  }
  tone(hz: number, ms: number): void {
    const n = Math.round((ms / 1000) * RATE);
    const x = new Int16Array(n);
    const ramp = RATE * 0.005;
    for (let i = 0; i < n; i++) {
      const env = Math.min(1, i / ramp, (n - i) / ramp);
      x[i] = Math.round(9000 * env * Math.sin((2 * Math.PI * hz * i) / RATE));
    }
    this.add(x);
  }
  /** Everything at `gain`, with line noise over it (RMS ≈ noiseRms; 40 is a quiet line). */
  render(rand: () => number, noiseRms = 40, gain = 1): Int16Array {
    const out = new Int16Array(this.length);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    // The sum of three uniforms in ±0.5 has σ = 0.5; ×80 gives RMS 40.
    const k = noiseRms * 2;
    for (let i = 0; i < out.length; i++) {
      const noise = (rand() + rand() + rand() - 1.5) * k;
      out[i] = Math.max(-32768, Math.min(32767, Math.round(out[i]! * gain + noise)));
    }
    return out;
  }
}

export type CorpusSet = 'base' | 'wide';

interface SetSpec {
  seed: number;
  human: Array<string | string[]>;
  machines: Array<[Kind, string[]]>;
  voices: Voice[];
  /** Voices per phrase: every `stride`-th of the list, offset by the phrase's index. */
  stride: number;
  /** Noise and gain of one clip. */
  line: (rand: () => number) => { noiseRms: number; gain: number };
  /** Whether a short voicemail in voice j of phrase i has a beep. */
  shortBeep: (i: number, j: number, rand: () => number) => boolean;
  codec: 'ffmpeg' | 'platform';
}

const SETS: Record<CorpusSet, SetSpec> = {
  base: {
    seed: 22,
    human: HUMAN,
    machines: [
      ['voicemail-short', VOICEMAIL_SHORT],
      ['voicemail-long', VOICEMAIL_LONG],
      ['screening', SCREENING],
    ],
    voices: VOICES,
    stride: 2,
    line: () => ({ noiseRms: 40, gain: 1 }),
    shortBeep: (_i, j) => j !== 4,
    codec: 'ffmpeg',
  },
  wide: {
    seed: 2211,
    human: HUMAN_WIDE,
    machines: [
      ['voicemail-short', VOICEMAIL_SHORT_WIDE],
      ['voicemail-long', VOICEMAIL_LONG_WIDE],
      ['screening', SCREENING_WIDE],
    ],
    voices: VOICES_WIDE,
    stride: 2,
    line: (rand) => ({ noiseRms: [40, 150, 400][Math.floor(rand() * 3)]!, gain: 0.4 + rand() * 0.8 }),
    // A third of short greetings end without a beep (some phones and carriers play none).
    shortBeep: (_i, _j, rand) => rand() >= 1 / 3,
    codec: 'platform',
  },
};

/** Through the platform's G.711 μ-law coder (the one Twilio media goes through) and back. */
async function platformLine(x: Int16Array): Promise<Int16Array> {
  const { mulawToPcm, pcmToMulaw } = await import('../../shared/kernel/audio/mulaw.ts');
  const pcm = mulawToPcm(pcmToMulaw(Buffer.from(x.buffer, x.byteOffset, x.byteLength)));
  return new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length));
}

/** Builds every clip of a set. Speech is cached per text and voice within the run. */
export async function buildCorpus(set: CorpusSet = 'base', onProgress?: (done: number) => void): Promise<Clip[]> {
  const spec = SETS[set];
  const dir = await mkdtemp(join(tmpdir(), 'bench-amd-'));
  const rand = rng(spec.seed);
  const cache = new Map<string, Int16Array>();
  const say = async (text: string, v: Voice) => {
    const k = `${v.engine}:${v.voice}:${text}`;
    let x = cache.get(k);
    if (!x) cache.set(k, (x = await speak(text, v, dir)));
    return x;
  };
  const clips: Clip[] = [];
  const push = async (c: Omit<Clip, 'pcm'>, t: Timeline) => {
    const { noiseRms, gain } = spec.line(rand);
    const line = t.render(rand, noiseRms, gain);
    clips.push({ ...c, pcm: spec.codec === 'ffmpeg' ? await phoneLine(line) : await platformLine(line) });
    onProgress?.(clips.length);
  };
  const voicesFor = (i: number) => spec.voices.filter((_, j) => (i + j) % spec.stride === 0);
  try {
    let n = 0;
    for (const [i, phrase] of spec.human.entries()) {
      for (const v of voicesFor(i)) {
        const t = new Timeline();
        t.silence(300 + rand() * 900); // pick-up to first word
        const parts = Array.isArray(phrase) ? phrase : [phrase];
        for (const [k, p] of parts.entries()) {
          if (k) t.silence(400 + rand() * 300); // a person repeating themselves, not yet a turn-taking pause
          t.add(await say(p, v));
        }
        const speechEndMs = t.ms;
        t.silence(4000); // waiting for the caller to speak
        await push({ id: `human-${++n}`, kind: 'human', expected: 'human', speechEndMs, beep: null }, t);
      }
    }
    for (const [kind, phrases] of spec.machines) {
      for (const [i, phrase] of phrases.entries()) {
        for (const [j, v] of spec.voices.entries()) {
          if ((i + j) % spec.stride !== 0) continue;
          const withBeep =
            kind === 'voicemail-short'
              ? spec.shortBeep(i, j, rand)
              : kind === 'voicemail-long'
                ? (i + j) % 4 === 0
                : j % 3 === 0;
          const t = new Timeline();
          t.silence(200 + rand() * 600);
          t.add(await say(phrase, v));
          const speechEndMs = t.ms;
          let beep: Clip['beep'] = null;
          if (withBeep) {
            t.silence(250 + rand() * 500);
            const hz = BEEPS[(i + j) % BEEPS.length]!;
            const startMs = t.ms;
            t.tone(hz, 300 + rand() * 700);
            beep = { startMs, endMs: t.ms, hz };
          }
          t.silence(5000); // recording, nobody talks
          await push({ id: `${kind}-${++n}`, kind, expected: 'machine', speechEndMs, beep }, t);
        }
      }
    }
    return clips;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
