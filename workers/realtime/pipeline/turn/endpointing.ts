import type { AgentRow } from '../../../../shared/domains/agents/db.ts';
import type { Config } from '../../../../shared/kernel/config/index.ts';
import { words } from '../words.ts';

/** How a session decides that the caller has finished (per agent `turnTaking`, defaulting to the env config). */
export interface EndpointingPolicy {
  /** The fixed silence window: used when adaptive endpointing is off, and when what was said gives no hint. */
  fixedMs: number;
  adaptive: boolean;
  /** Window after a complete utterance (final punctuation from the STT, a question). */
  completeMs: number;
  /** Window after an utterance that is not finished (a trailing "and", "because", a number being read out). */
  incompleteMs: number;
  /** Start the reply when the caller goes quiet, before the endpoint is confirmed (held until it is). */
  preemptive: boolean;
  /** How readily a turn is taken when the evidence is mixed: scales the windows between completeMs and incompleteMs. */
  eagerness: Eagerness;
}

export type Eagerness = 'low' | 'normal' | 'high';

/** The agent's turnTaking fields over the platform defaults. */
export function endpointingPolicy(
  c: Pick<
    Config,
    | 'REALTIME_ENDPOINTING_MS'
    | 'REALTIME_ENDPOINTING_ADAPTIVE'
    | 'REALTIME_ENDPOINTING_COMPLETE_MS'
    | 'REALTIME_ENDPOINTING_INCOMPLETE_MS'
    | 'REALTIME_PREEMPTIVE_REPLIES'
    | 'REALTIME_TURN_EAGERNESS'
  >,
  agent: Pick<AgentRow, 'turn_taking'>,
): EndpointingPolicy {
  const t = agent.turn_taking ?? {};
  return {
    fixedMs: t.endpointingMs ?? c.REALTIME_ENDPOINTING_MS,
    adaptive: t.adaptive ?? c.REALTIME_ENDPOINTING_ADAPTIVE,
    completeMs: t.completeMs ?? c.REALTIME_ENDPOINTING_COMPLETE_MS,
    incompleteMs: t.incompleteMs ?? c.REALTIME_ENDPOINTING_INCOMPLETE_MS,
    preemptive: t.preemptive ?? c.REALTIME_PREEMPTIVE_REPLIES,
    eagerness: t.eagerness ?? c.REALTIME_TURN_EAGERNESS,
  };
}

export type Completeness = 'complete' | 'incomplete' | 'unknown';

/**
 * Words after which a sentence goes on: conjunctions, prepositions, articles, possessives, auxiliaries and
 * hesitations. A caller who stops after one of them is pausing, not done.
 */
const CONTINUES = new Set(
  (
    'and or but so because cause since although though unless until if when while whereas then than that which who ' +
    'whom whose where what how why like as to of in on at for from with by about into onto over under between ' +
    'after before during through without the a an this these those my your our their his her its some any each ' +
    'every no is are was were be been am will would can could should shall may might must do does did have has ' +
    "had not also just um uh er erm hmm well i i'm we you they he she it's plus minus point dash"
  ).split(' '),
);

const NUMBER_WORDS = new Set(
  (
    'zero oh one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen ' +
    'seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand double triple'
  ).split(' '),
);

/**
 * Whether a transcript reads as a finished utterance. Complete: it ends with final punctuation (a question mark
 * included; streaming STT punctuates). An unpunctuated question shape ("do you have…") is not enough: it reads
 * the same halfway through ("do you have anything on"). Incomplete: it ends on a word after which speech goes on, or on a number
 * (a phone or card number is read out in groups with pauses between). Otherwise unknown.
 */
export function completeness(text: string): Completeness {
  const t = text.trim();
  const w = words(t);
  if (w.length === 0) return 'unknown';
  const last = w.at(-1)!;
  if (CONTINUES.has(last) || /[,;:\-–—]$/.test(t)) return 'incomplete';
  if (/\d$/.test(last) || NUMBER_WORDS.has(last)) {
    // "I'm calling about order 4 5 1 …": a number at the end is read on unless the STT closed the sentence.
    return /[.!?]["')\]]*$/.test(t) && w.length > 1 && !/^\d+$/.test(w.at(-2)!) ? 'complete' : 'incomplete';
  }
  return /[.!?…]["')\]]*$/.test(t) ? 'complete' : 'unknown';
}

/**
 * The silence window for what was said so far. Only a final transcript may shorten it: an interim one arrives
 * while the caller may already be speaking again (the VAD can run behind the STT), so it can only lengthen it.
 */
export function endpointWindowMs(policy: EndpointingPolicy, text: string, final = true): number {
  if (!policy.adaptive) return policy.fixedMs;
  const c = completeness(text);
  if (c === 'incomplete') return policy.incompleteMs;
  return c === 'complete' && final ? policy.completeMs : policy.fixedMs;
}

/** Two transcripts say the same thing (case, punctuation and spacing aside): a prepared reply still fits. */
export function sameWords(a: string, b: string): boolean {
  return words(a).join(' ') === words(b).join(' ');
}

/** What is known about the end of the caller's speech when the window is (re)decided. */
export interface TurnEvidence {
  /** What the STT heard so far in this utterance. */
  text: string;
  /** The newest part of it is a final result (not an interim). */
  final: boolean;
  /**
   * Speech the VAD heard after the transcript's last word ended (ms; ≤ 0 when the words reach the end): a
   * transcript behind the audio is missing words, and what it ends on says nothing about how the speech ended.
   */
  uncoveredMs: number;
  /**
   * The end-of-utterance prosody score (-1 more is coming … +1 finished; shared/kernel/audio/prosody.ts), null if
   * unknown. The session passes it as a getter (turn-evidence.ts): it is computed only if the decision reads it.
   */
  prosody: number | null;
  /** The STT punctuates its finals (streaming vendors do): a final without a closing mark was not read as finished. */
  punctuated: boolean;
}

/** A transcript whose words end this long before the VAD's last speech is missing words (not just rounding). */
export const STALE_MS = 120;

const EAGERNESS_SCALE: Record<Eagerness, number> = { low: 1.25, normal: 1, high: 0.8 };
const EAGERNESS_SHIFT: Record<Eagerness, number> = { low: -0.15, normal: 0, high: 0.15 };

/**
 * Between `fixedMs` (sounds finished) and `incompleteMs` (sounds like more is coming) by the prosody score: only a
 * clearly finished-sounding end (score ≥ 0.9) gets the plain window, a level one (≤ 0.3) the long one.
 */
function byProsody(p: EndpointingPolicy, score: number | null): number {
  const s = clamp(((score ?? 0) + EAGERNESS_SHIFT[p.eagerness] - 0.3) / 0.6, 0, 1);
  return p.incompleteMs - (p.incompleteMs - p.fixedMs) * s;
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

export type WindowReason = 'fixed' | 'complete' | 'incomplete' | 'unknown' | 'unpunctuated' | 'stale';

/**
 * The silence window that ends the turn, from everything known about the end of the speech. Words first: closing
 * punctuation from a final → `completeMs`, an unfinished ending → `incompleteMs`. A transcript that misses the end
 * of the speech (it lags the audio) is not read for completeness: the prosody decides until the words catch up
 * (they then decide again). A final that a punctuating STT left open, with no hint in its words, leans unfinished
 * unless the voice sounds finished. Eagerness scales the result; it stays within [completeMs, incompleteMs].
 */
export function decideWindow(p: EndpointingPolicy, ev: TurnEvidence): { windowMs: number; reason: WindowReason } {
  if (!p.adaptive) return { windowMs: p.fixedMs, reason: 'fixed' };
  let windowMs: number;
  let reason: WindowReason;
  const c = completeness(ev.text);
  if (ev.uncoveredMs > STALE_MS) {
    windowMs = byProsody(p, ev.prosody);
    reason = 'stale';
  } else if (c === 'incomplete') {
    windowMs = p.incompleteMs;
    reason = 'incomplete';
  } else if (c === 'complete') {
    // A closing mark over a voice that clearly goes on (rising, cut off mid-level) gets the plain window.
    windowMs = ev.final && (ev.prosody ?? 0) > -0.5 ? p.completeMs : p.fixedMs;
    reason = 'complete';
  } else if (ev.final && ev.punctuated) {
    windowMs = byProsody(p, ev.prosody);
    reason = 'unpunctuated';
  } else {
    windowMs = p.fixedMs;
    reason = 'unknown';
  }
  const scaled = windowMs === p.completeMs ? windowMs : windowMs * EAGERNESS_SCALE[p.eagerness];
  return { windowMs: Math.round(clamp(scaled, p.completeMs, p.incompleteMs)), reason };
}
