import { readdirSync, readFileSync } from 'node:fs';
import { collect } from '../../../shared/kernel/audio/pcm.ts';
import { resamplePcm } from '../../../shared/kernel/audio/resampler.ts';
import type { TtsEngine } from '../../../shared/engines/tts/types.ts';

/**
 * The round-trip sentence set: everyday sentences of common words, read by the default TTS voice and transcribed
 * by the default STT. Documented with its measured WER in docs/speech.md.
 */
export const ROUND_TRIP_SENTENCES = [
  'please call me back when you get home tonight',
  'we need to buy milk bread and eggs from the store',
  'i would like to book a table for two people',
  'turn left at the next corner and go straight ahead',
  'the train to new york leaves at seven in the evening',
  'thank you very much for your help with this project',
  'can you tell me the way to the nearest hospital',
  'my phone number is five five five one two three four',
  'the weather is nice today in the city of boston',
  'the children are playing in the park after school',
];

/** Lower-case words without punctuation. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** Word-level edit distance (substitutions + insertions + deletions). */
export function wordErrors(ref: string, hyp: string): number {
  const r = words(ref);
  const h = words(hyp);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const cur = [i];
    for (let j = 1; j <= h.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[h.length]!;
}

/** Synthesizes text to mono s16le at 16 kHz. */
export async function speak(tts: TtsEngine, text: string, voiceId = 'default'): Promise<Buffer> {
  const a = await tts.synthesize({ text, voiceId, speed: 1, pitch: 1 });
  return resamplePcm(await collect(a.chunks), a.sampleRate, 16000);
}

/**
 * A two-speaker conversation: turns alternate between two voices with `gapSeconds` of silence between them.
 * Returns the 16 kHz PCM and each turn's true speaker and time span.
 */
export async function conversation(
  tts: TtsEngine,
  turns: { voice: string; text: string }[],
  gapSeconds = 0.8,
): Promise<{ pcm: Buffer; truth: { voice: string; start: number; end: number }[] }> {
  const parts: Buffer[] = [];
  const truth: { voice: string; start: number; end: number }[] = [];
  let t = 0;
  for (const turn of turns) {
    const pcm = await speak(tts, turn.text, turn.voice);
    truth.push({ voice: turn.voice, start: t, end: t + pcm.length / 32000 });
    t += pcm.length / 32000 + gapSeconds;
    parts.push(pcm, Buffer.alloc(Math.round(gapSeconds * 16000) * 2));
  }
  return { pcm: Buffer.concat(parts), truth };
}

export const CONVERSATION_LINES = [
  'hello how are you doing today',
  'i am fine thank you and you',
  'the weather is nice in the city',
  'yes we should go for a walk later',
  'would you like to have lunch first',
  'that sounds like a very good idea',
  'let us meet at the station at noon',
  'see you there and do not be late',
];

/** Fraction of segment time whose label matches the true speaker under the best label↔voice mapping. */
export function diarizationAccuracy(
  segments: { start: number; end: number; speaker?: string }[],
  truth: { voice: string; start: number; end: number }[],
): number {
  const voices = [...new Set(truth.map((t) => t.voice))];
  const labels = [...new Set(segments.map((s) => s.speaker ?? ''))];
  let best = 0;
  for (const perm of permutations(voices)) {
    let ok = 0;
    let total = 0;
    for (const s of segments) {
      const mid = (s.start + s.end) / 2;
      const t = truth.find((x) => mid >= x.start - 0.3 && mid <= x.end + 0.3);
      if (!t) continue;
      total += s.end - s.start;
      if (perm[labels.indexOf(s.speaker ?? '')] === t.voice) ok += s.end - s.start;
    }
    best = Math.max(best, total ? ok / total : 0);
  }
  return best;
}

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

/** Process ids of the pocketsphinx decoders this process is running now (Linux /proc; the test platform is in-process). */
export function runningDecoders(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid …`; comm is cut to 15 characters; a zombie (Z) has already stopped decoding.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const m = /^\d+ \((.*)\) (\S+) (\d+)/.exec(stat);
      if (m && m[1]!.startsWith('pocketsphinx') && m[2] !== 'Z' && Number(m[3]) === process.pid) {
        pids.push(Number(entry));
      }
    } catch {
      // The process exited while we looked.
    }
  }
  return pids;
}
