/**
 * The interruption seam (issue 30): whether caller speech heard while the agent speaks or thinks is a barge-in.
 * The turn stage asks on every VAD frame and every transcript of such speech, and acts on `speech` and
 * `long_speech` (the agent stops); what never becomes one is dropped when it ends (a backchannel or a noise over the
 * agent is not a turn). Implementations are chosen per agent by name (`turnTaking.interruption`,
 * interruption-registry.ts).
 */

/** What the agent is doing while the caller speaks: its audio plays, or its reply is being made (no audio yet). */
export type AgentPhase = 'speaking' | 'thinking';

/** The caller speech over the agent so far. */
export interface SpeechOverAgent {
  phase: AgentPhase;
  /** Audio time since the speech began (ms): how long the caller has been at it. */
  speechMs: number;
  /**
   * Audio time since the sound the speech continues from rose over the line's floor (ms, ≥ `speechMs`): the VAD
   * scores a soft onset ("w…ait") as speech up to a quarter second after it began. Absent when not known
   * (`speechMs` then).
   */
  soundMs?: number;
  /** What the STT heard of it so far ('' when nothing yet). */
  text: string;
  /** `text` is final (all its words are in), not an interim guess. */
  final: boolean;
  /**
   * The most (dB) the speech has stood above the voices the line carried before it (line-levels.ts): `null` when the
   * line carried none (silence, steady noise) or has not been heard long enough to say; absent when the VAD reports
   * no levels.
   */
  contrastDb?: number | null;
  /** The same, whether or not the line carries voices (`null`: not known yet; absent: no levels). */
  lineContrastDb?: number | null;
  /**
   * The least (dB) the speech has been under the caller's own speech level since it began (line-levels.ts
   * `underCallerDb`): `null` until the caller has spoken on this call; absent when the VAD reports no levels.
   */
  underCallerDb?: number | null;
}

/**
 * `speech`: a barge-in on what was heard; `long_speech`: a barge-in on how long it lasted; `backchannel`: the caller
 * is listening ("mm-hm"); `pending`: not (yet) either: a noise, or speech too short to tell (a detector need not
 * read the words before a threshold is passed, so a backchannel may be `pending` first).
 */
export type InterruptionVerdict = 'speech' | 'long_speech' | 'backchannel' | 'pending';

export interface InterruptionDetector {
  readonly name: string;
  decide(s: SpeechOverAgent): InterruptionVerdict;
  /** A `long_speech` verdict stops the agent tentatively (resumed if no words come) instead of interrupting. */
  readonly resumesFalseStarts?: boolean;
}

/** Per-phase thresholds, after the agent's settings over the platform's defaults. */
export interface PhaseThresholds {
  minMs: number;
  forceMs: number;
}

/** What every interruption detector is built from: the platform's barge-in defaults (REALTIME_BARGE_IN_*). */
export interface InterruptionContext {
  bargeInMinMs: number;
  bargeInForceMs: number;
}

/** The thresholds of both phases: the agent's per-phase settings over the platform's defaults. */
export function phaseThresholds(
  ctx: InterruptionContext,
  opts: { speaking?: { minMs?: number; forceMs?: number }; thinking?: { minMs?: number; forceMs?: number } },
): Record<AgentPhase, PhaseThresholds> {
  const of = (p?: { minMs?: number; forceMs?: number }): PhaseThresholds => ({
    minMs: p?.minMs ?? ctx.bargeInMinMs,
    forceMs: p?.forceMs ?? ctx.bargeInForceMs,
  });
  return { speaking: of(opts.speaking), thinking: of(opts.thinking) };
}
