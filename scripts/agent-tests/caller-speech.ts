import { trimSilence } from '../../support/audio/trim-silence.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import type { ScenarioTurn } from '../../shared/kernel/contracts/agent-tests.ts';

/**
 * A turn's caller audio: its words synthesized by the local flite voice (8 kHz PCM, what a phone line carries),
 * one stretch per segment between the turn's `pauseAfterWords` pauses, with that much silence between them.
 * `script` is the same turn as the simulated STT hears it: the segments joined by ` | `, so it finalizes each one
 * as a vendor finalizes a stretch of speech followed by a pause.
 */
export interface TurnSpeech {
  pcm: Buffer;
  script: string;
  /** Pauses inside the turn, in ms (a reply before the last segment is a cut-in). */
  pauses: number[];
  /** Length of the last segment's audio, ms. */
  lastSegmentMs: number;
}

export function segments(turn: ScenarioTurn): { words: string[]; pauseMs: number }[] {
  const words = turn.say.split(/\s+/).filter(Boolean);
  const out: { words: string[]; pauseMs: number }[] = [];
  let cur: string[] = [];
  words.forEach((w, i) => {
    cur.push(w);
    const pause = turn.pauseAfterWords?.[String(i + 1)];
    if (pause && i < words.length - 1) {
      out.push({ words: cur, pauseMs: pause });
      cur = [];
    }
  });
  out.push({ words: cur, pauseMs: 0 });
  return out;
}

export async function turnSpeech(turn: ScenarioTurn): Promise<TurnSpeech> {
  const parts: Buffer[] = [];
  const segs = segments(turn);
  let last: Buffer = Buffer.alloc(0);
  for (const s of segs) {
    last = trimSilence(await fliteUtterance(s.words.join(' ')));
    parts.push(last);
    if (s.pauseMs) parts.push(Buffer.alloc(16 * s.pauseMs)); // 8 kHz × 2 bytes = 16 bytes per ms
  }
  return {
    pcm: Buffer.concat(parts),
    script: segs.map((s) => s.words.join(' ')).join(' | '),
    pauses: segs.filter((s) => s.pauseMs).map((s) => s.pauseMs),
    lastSegmentMs: last.length / 16,
  };
}
