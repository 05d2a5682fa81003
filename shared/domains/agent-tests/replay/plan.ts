import { CALLER_RATE, isCallerTurn, type RecordedCall } from './recorded-call.ts';

/** Audio kept before a turn's onset and after its last speech: VAD marks the onset a little after it began. */
const LEAD_MS = 200;
const TAIL_MS = 150;
const BYTES_PER_MS = (CALLER_RATE * 2) / 1000;

/** One caller turn to say again: its audio and when (ms from the call's start) its audio begins. */
export interface ReplayCallerTurn {
  /** 1-based: the n-th caller turn of the recorded call. */
  n: number;
  atMs: number;
  /** Caller speech onset and last speech in the recording (the trace row's times). */
  onsetMs: number;
  endMs: number;
  pcm: Buffer;
  /** What the platform heard then: the text a simulated STT transcribes this audio as. */
  text: string;
}

export interface ReplayPlan {
  turns: ReplayCallerTurn[];
  /** Caller turns that cannot be replayed, by their 1-based number, with why. */
  skipped: Map<number, string>;
  /** The recording's length: the replay lasts as long as the call did, at least. */
  durationMs: number;
}

/**
 * Cuts the caller's side of a recorded call into its turns (the trace's user rows: speech onset → last speech),
 * each to be played at its original time. Between turns the line is silent: what the recording held there (echo,
 * noise) was not a turn, and a replay must not invent one.
 */
export function replayPlan(call: RecordedCall): ReplayPlan {
  const skipped = new Map<number, string>();
  const turns: ReplayCallerTurn[] = [];
  const users = call.turns.filter(isCallerTurn);
  const pcm = call.callerPcm;
  users.forEach((u, i) => {
    const n = i + 1;
    if (/^DTMF /.test(u.text)) return void skipped.set(n, 'a keypad turn (DTMF) is not audio');
    if (!pcm) return void skipped.set(n, 'the call has no recording');
    const prevEnd = i > 0 ? users[i - 1]!.endMs : 0;
    const nextOnset = users[i + 1]?.startMs ?? Infinity;
    const from = Math.max(prevEnd, u.startMs - LEAD_MS, 0);
    const to = Math.min(nextOnset, u.endMs + TAIL_MS);
    const slice = pcm.subarray(Math.floor(from * BYTES_PER_MS) & ~1, Math.floor(to * BYTES_PER_MS) & ~1);
    if (slice.length < BYTES_PER_MS * 40) return void skipped.set(n, 'the recording holds no audio for this turn');
    turns.push({ n, atMs: from, onsetMs: u.startMs, endMs: u.endMs, pcm: Buffer.from(slice), text: u.text });
  });
  return { turns, skipped, durationMs: pcm ? pcm.length / BYTES_PER_MS : 0 };
}
