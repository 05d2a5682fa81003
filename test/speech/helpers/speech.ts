import { readdirSync, readFileSync } from 'node:fs';
import { collect } from '../../../shared/kernel/audio/pcm.ts';
import { resamplePcm } from '../../../shared/kernel/audio/resampler.ts';
import { spawnerPid } from '../../../shared/kernel/process/spawner.ts';
import type { TtsEngine } from '../../../shared/engines/tts/types.ts';

// The round-trip sentences live in support/ so the speech benchmarks use the same ones; the word error measure is
// shared with the robustness benchmark.
export { ROUND_TRIP_SENTENCES } from '../../../support/helpers/round-trip.ts';
export { words, wordErrors } from '../../../shared/kernel/text/word-errors.ts';

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

/**
 * Process ids of the pocketsphinx decoders this process is running now (Linux /proc; the test platform is
 * in-process). Their parent is this process's spawner (shared/kernel/process/spawner.ts), which forks them.
 */
export function runningDecoders(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid …`; comm is cut to 15 characters; a zombie (Z) has already stopped decoding.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const m = /^\d+ \((.*)\) (\S+) (\d+)/.exec(stat);
      if (m && m[1]!.startsWith('pocketsphinx') && m[2] !== 'Z' && Number(m[3]) === spawnerPid()) {
        pids.push(Number(entry));
      }
    } catch {
      // The process exited while we looked.
    }
  }
  return pids;
}
