import { performance } from 'node:perf_hooks';
import { trimSilence } from '../../kernel/audio/trim-silence.ts';
import type { BackchannelResult, Backchannels, Check, Impairments } from '../../contracts/agent-tests.ts';
import { mulberry32 } from '../../kernel/prng.ts';
import { fliteUtterance, type CallerVoice } from './caller-speech.ts';

/**
 * Caller backchannels (impairments.backchannels): while the agent speaks, the caller acknowledges it now and then
 * ("mm-hmm", "okay"), in the local flite voice through the same handset and line as its turns. A good platform
 * lets the agent talk on: a backchannel is neither a barge-in nor a turn. The words and the gaps between them come
 * from the scenario's seed (their own PRNG, so adding backchannels never changes which frames the line loses); when
 * they fall depends on the agent's real timing.
 *
 * A backchannel is said only over agent audio still to play, with room to spare, so it never runs into the
 * agent's silence or the caller's next turn. The simulated STT is told out of band, from a backchannel's start
 * until the caller's wait ends (its next turn comes after), that speech it begins to hear is the backchannel's
 * word (OfflineVendors.hearBackchannel): the scenario's script is not interleaved with them, so one the STT misses
 * (lost on the line) or hears as two stretches, or one the line delays, shifts no later turn.
 */

/** What the backchannels need of the caller: its voice and what it hears of the agent. TwilioCaller has them. */
export interface BackchannelLine {
  /** Queues speech (8 kHz PCM s16le); resolves when its last frame was sent. */
  say(pcm8k: Buffer): Promise<number>;
  /** Agent audio still to play, ms. */
  readonly bufferedMs: number;
  /** performance.now() of each `clear` (the platform stopping the agent for a barge-in). */
  readonly clears: readonly number[];
  readonly closed: Promise<void>;
}

/** One backchannel as the caller said it. */
export interface SaidBackchannel {
  /** The caller's turn whose reply it was said over; null for the greeting. */
  turn: number | null;
  word: string;
  /** Date.now() when its first and last frames were sent. */
  startWall: number;
  endWall: number;
  /** A `clear` came while it was said or within INTERRUPT_WINDOW_MS after. */
  interrupted: boolean;
}

export interface BackchannelSpeaker {
  readonly said: SaidBackchannel[];
  /**
   * Runs while the caller waits out the agent's reply to turn `turn` (−1: the greeting), saying backchannels over
   * it, and returns `wait`'s result once it settles and no backchannel is being said. `bargeAt` (performance.now())
   * is when the caller will barge in: no backchannel comes close to it.
   */
  over<T>(line: BackchannelLine, turn: number, wait: Promise<T>, bargeAt?: number): Promise<T>;
}

/**
 * What flite is given for a word it would otherwise spell out ("mm-hmm" as "em em aitch em em"): a hum it can say.
 * The simulated STT still hears the word as written.
 */
const SPOKEN: Record<string, string> = {
  'mm-hmm': 'um-hum',
  'mm-hm': 'um-hum',
  mhm: 'um-hum',
  mmhmm: 'um-hum',
  hmm: 'hum',
  mm: 'um',
};

/** How often the caller checks whether to say one, ms. */
const POLL_MS = 40;
/** Agent audio left after a backchannel's end at the least (it is said well inside the agent's speech). */
const AGENT_LEFT_MS = 200;
/** A backchannel ends this long before a planned barge-in at the least (the platform must not join the two). */
const BARGE_MARGIN_MS = 1000;
/** A `clear` this long after a backchannel's end is still its barge-in (the decision waits for the STT's final). */
const INTERRUPT_WINDOW_MS = 1500;

const NONE: BackchannelSpeaker = { said: [], over: (_line, _turn, wait) => wait };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The seeded sequence of backchannels: each call gives the next word and the gap before it (everyMs ±40 %). Its own
 * stream from the seed: the line's PRNG draws frame by frame, and draws the same with backchannels or without.
 */
export function backchannelPlan(cfg: Backchannels, seed: number): () => { word: string; gapMs: number } {
  const rand = mulberry32((seed ^ 0x5bd1e995) >>> 0);
  return () => {
    const word = cfg.words[Math.floor(rand() * cfg.words.length)]!;
    return { word, gapMs: Math.round(cfg.everyMs * (0.6 + 0.8 * rand())) };
  };
}

/**
 * The scenario's backchannel speaker: its words synthesized up front (through `voice`, the caller's handset), and
 * `hearAs` to tell the simulated STT what it is about to hear. A no-op without impairments.backchannels.
 */
export async function backchannelSpeaker(
  imp: Impairments | undefined,
  voice: (pcm: Buffer) => Buffer,
  hearAs: (word: string | null) => void,
  fliteVoice: CallerVoice = 'kal',
): Promise<BackchannelSpeaker> {
  if (!imp?.backchannels) return NONE;
  const cfg = imp.backchannels;
  const audio = new Map<string, Buffer>();
  for (const w of cfg.words)
    if (!audio.has(w)) audio.set(w, voice(trimSilence(await fliteUtterance(SPOKEN[w.toLowerCase()] ?? w, fliteVoice))));
  const plan = backchannelPlan(cfg, imp.seed);
  /** The line may hold a frame back this long: the agent must still be speaking when the last one arrives. */
  const jitterMs = imp.jitterMs ?? 0;
  const said: SaidBackchannel[] = [];
  let { word, gapMs } = plan();

  return {
    said,
    async over(line, turn, wait, bargeAt) {
      let settled = false;
      const done = () => {
        settled = true;
      };
      const settle = wait.then(done, done);
      const mine: { s: SaidBackchannel; start: number; end: number }[] = [];
      /** When the next one is due: a gap after the agent's audio first plays, then a gap after each. */
      let due: number | null = null;
      while (!settled) {
        await Promise.race([settle, sleep(POLL_MS)]);
        if (settled) break;
        const now = performance.now();
        const ahead = line.bufferedMs;
        if (ahead <= 0) continue;
        if (due === null) due = now + gapMs;
        const pcm = audio.get(word)!;
        const len = pcm.length / 16;
        if (now < due || ahead < len + jitterMs + AGENT_LEFT_MS) continue;
        if (bargeAt !== undefined && now + len + jitterMs + BARGE_MARGIN_MS > bargeAt) continue;
        hearAs(word);
        const s: SaidBackchannel = {
          turn: turn < 0 ? null : turn,
          word,
          startWall: Date.now(),
          endWall: 0,
          interrupted: false,
        };
        const sending = line.say(pcm);
        sending.catch(() => {}); // a call that closes mid-word: the wait below ends on `closed`
        await Promise.race([sending, line.closed]);
        s.endWall = Date.now();
        const end = performance.now();
        said.push(s);
        mine.push({ s, start: now, end });
        ({ word, gapMs } = plan());
        due = end + gapMs;
      }
      // The caller's next turn is its script's next line again.
      if (mine.length) hearAs(null);
      // A barge-in on a backchannel shows as a `clear` while it was said or soon after (the platform decides on its
      // interim or its final); the caller's own next turn comes later (BARGE_MARGIN_MS, or after the agent's quiet).
      const until = performance.now();
      for (const m of mine)
        m.s.interrupted = line.clears.some((t) => t >= m.start && t <= Math.min(m.end + INTERRUPT_WINDOW_MS, until));
      return wait;
    },
  };
}

/**
 * The backchannels as the result reports them: `t0` is the call's start (Date.now() clock), `callerTurns` the
 * platform's recorded caller turns (their start, same clock): one that began while a backchannel was said, or just
 * after, is that backchannel taken as a turn.
 */
export function backchannelResults(
  said: SaidBackchannel[],
  t0: number,
  callerTurnStarts: number[],
): BackchannelResult[] {
  return said.map((s) => ({
    turn: s.turn,
    word: s.word,
    atMs: Math.max(0, s.startWall - t0),
    interrupted: s.interrupted,
    tookTurn: callerTurnStarts.some((at) => at >= s.startWall - 300 && at <= s.endWall + 500),
  }));
}

const where = (b: BackchannelResult) =>
  `"${b.word}" at ${(b.atMs / 1000).toFixed(1)} s (over ${b.turn === null ? 'the greeting' : `turn ${b.turn}'s reply`})`;

/** What each disruptive backchannel did, in words ('' when none was). */
export function backchannelTrouble(results: BackchannelResult[]): string {
  return results
    .filter((b) => b.interrupted || b.tookTurn)
    .map(
      (b) =>
        `${where(b)} ${[b.interrupted ? 'interrupted the agent' : '', b.tookTurn ? 'was taken as a caller turn' : '']
          .filter(Boolean)
          .join(' and ')}`,
    )
    .join('; ');
}

/** expect.ignoresBackchannels: some were said, and none interrupted the agent or was taken as a turn. */
export function ignoresBackchannelsCheck(results: BackchannelResult[]): Check {
  const expectation = 'expect.ignoresBackchannels';
  if (results.length === 0)
    return {
      expectation,
      passed: false,
      reason:
        'no backchannel was said: the agent never spoke long enough (one needs about a second of its audio ahead)',
    };
  const trouble = backchannelTrouble(results);
  return trouble
    ? { expectation, passed: false, reason: trouble }
    : {
        expectation,
        passed: true,
        reason: `the agent talked on through ${results.length} backchannel${results.length === 1 ? '' : 's'} (${[
          ...new Set(results.map((b) => b.word)),
        ].join(', ')})`,
      };
}
