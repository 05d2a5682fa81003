import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWav } from '../../shared/kernel/audio/wav.ts';
import { runProcess } from '../../shared/kernel/process/spawn.ts';

/**
 * The synthetic answering set: what the called party's line carries in the first seconds after the answer.
 * Speech comes from the local TTS engines (four flite voices, two espeak-ng accents at two speeds), is placed on a
 * timeline with the pauses a person or a machine leaves, gets a beep where a machine would play one, low line
 * noise, and goes through G.711 μ-law at 8 kHz and back with ffmpeg, as a phone call does.
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

const VOICEMAIL_SHORT = [
  'Leave a message.',
  'Hi, it is Tom. Leave a message.',
  'You have reached Anna. Please leave a message after the tone.',
  'Not here. Leave a message.',
];

const VOICEMAIL_LONG = [
  'Hi, you have reached the voicemail of John Miller. I am not available to take your call right now. Please leave your name, number and a short message after the beep, and I will get back to you as soon as I can.',
  'The person you are calling is not available. Please leave a message after the tone. When you have finished recording, you may hang up.',
  'Thank you for calling Bright Dental. Our office is currently closed. Our hours are nine to five, Monday through Friday. Please leave a message and we will return your call.',
  'Hey, this is Kate. Sorry I missed you. Leave me a message and I will call you back.',
];

const SCREENING = [
  'Hi, the person you are calling is using a screening service and will get a copy of this conversation. Go ahead and say your name and why you are calling.',
  'Please state your name and the reason for your call, and I will see if this person is available.',
  'This call is being screened. Please say your name and the purpose of your call after the tone.',
];

type Voice = { engine: 'flite'; voice: string } | { engine: 'espeak'; voice: string; speed: number };
const VOICES: Voice[] = [
  { engine: 'flite', voice: 'slt' },
  { engine: 'flite', voice: 'kal' },
  { engine: 'flite', voice: 'awb' },
  { engine: 'flite', voice: 'rms' },
  { engine: 'espeak', voice: 'en-us', speed: 165 },
  { engine: 'espeak', voice: 'en-gb', speed: 190 },
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
  /** Everything, with low line noise (RMS ≈ 40) over it. */
  render(rand: () => number): Int16Array {
    const out = new Int16Array(this.length);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    for (let i = 0; i < out.length; i++) {
      const noise = (rand() + rand() + rand() - 1.5) * 80;
      out[i] = Math.max(-32768, Math.min(32767, Math.round(out[i]! + noise)));
    }
    return out;
  }
}

/** Builds every clip (about 120). Speech is cached per text and voice within the run. */
export async function buildCorpus(onProgress?: (done: number) => void): Promise<Clip[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-amd-'));
  const rand = rng(22);
  const cache = new Map<string, Int16Array>();
  const say = async (text: string, v: Voice) => {
    const k = `${v.engine}:${v.voice}:${text}`;
    let x = cache.get(k);
    if (!x) cache.set(k, (x = await speak(text, v, dir)));
    return x;
  };
  const clips: Clip[] = [];
  const push = async (c: Omit<Clip, 'pcm'>, t: Timeline) => {
    clips.push({ ...c, pcm: await phoneLine(t.render(rand)) });
    onProgress?.(clips.length);
  };
  try {
    let n = 0;
    for (const [i, phrase] of HUMAN.entries()) {
      for (const v of VOICES.filter((_, j) => (i + j) % 2 === 0)) {
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
    const machines: Array<[Kind, string[]]> = [
      ['voicemail-short', VOICEMAIL_SHORT],
      ['voicemail-long', VOICEMAIL_LONG],
      ['screening', SCREENING],
    ];
    for (const [kind, phrases] of machines) {
      for (const [i, phrase] of phrases.entries()) {
        for (const [j, v] of VOICES.entries()) {
          if ((i + j) % 2 !== 0) continue;
          const withBeep = kind !== 'screening' ? (i + j) % 4 === 0 || kind === 'voicemail-short' : j % 3 === 0;
          const t = new Timeline();
          t.silence(200 + rand() * 600);
          t.add(await say(phrase, v));
          const speechEndMs = t.ms;
          let beep: Clip['beep'] = null;
          if (withBeep && !(kind === 'voicemail-short' && j === 4)) {
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
