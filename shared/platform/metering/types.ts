/**
 * The metering interface every metered operation calls. Implemented in ./meter.ts (credits issue).
 *
 * Usage pattern in a route or job:
 *   const r = await meter.reserve({ developerId, category: 'tts', units: text.length, unit: 'characters',
 *                                   provider, billable, requestId, operation: 'synthesize' });
 *   try { ...work...; await r.commit(actualUnits); } catch (e) { await r.refund(); throw e; }   // refund never throws
 * `reserve` is the pre-check and hold: it atomically deducts the estimate or throws ApiError
 * `insufficient_credits` (402). `commit` settles to the actual units (refunding or charging the difference);
 * `refund` returns the hold when the operation failed. Non-billable usage (caller's own provider key) is
 * recorded with credits 0 and never fails for lack of credits.
 */
export type MeterCategory = 'tts' | 'stt' | 'llm' | 'rag' | 'video' | 'session';

export interface MeterInput {
  developerId: string;
  category: MeterCategory;
  /** Estimated units for the hold (characters, audio seconds, tokens, generated video seconds, minutes…). */
  units: number;
  unit: string;
  provider: string;
  /** False when the caller's own provider key served the request: recorded, never charged. */
  billable: boolean;
  requestId: string;
  /** Operation name, the key into the credit-weight table (e.g. `synthesize`, `transcribe`, `chat`). */
  operation: string;
  /**
   * The hold's key for work that may run more than once (a job retried after a crash): `<kind>:<job id>`. A
   * reserve under a key that already holds returns that hold, so the job is held and charged once whatever
   * its retries. Without a key every reserve is a new hold.
   */
  holdKey?: string;
  /** The API key that started the work, where known: a daily cap per key counts its spend. */
  apiKeyId?: string;
}

export interface Reservation {
  readonly credits: number;
  /**
   * Grows the hold to `units` in total (work that goes on: a voice call reserves each reply ahead). Throws
   * `insufficient_credits` when the balance cannot cover the growth; the hold keeps what it had.
   */
  extendTo(units: number): Promise<void>;
  /**
   * Settles to the actual units. More than held is charged as far as a hard-limit balance goes; the rest is
   * recorded as waived with `waivedReason` (default `balance`), never dropped silently. Retries a briefly
   * unavailable database, then throws.
   */
  commit(actualUnits?: number, opts?: { waivedReason?: string }): Promise<void>;
  /**
   * Returns the hold. Never throws: a briefly unavailable database is retried, and a hold that still could not
   * be returned is logged and left to the hold sweeper (it settles holds left reserved past their work's end).
   */
  refund(): Promise<void>;
}

export interface UsageSnapshot {
  used: number;
  limit: number;
  remaining: number;
}

/** One hold of `Meter.holdAll`: a new one (`hold` null) at `input.units`, or `hold` grown to `input.units`. */
export interface HoldItem {
  hold: Reservation | null;
  input: MeterInput;
}

export interface Meter {
  reserve(input: MeterInput): Promise<Reservation>;
  /**
   * Opens and grows several holds of one developer at once (a voice call's minutes, STT, TTS and LLM ahead of a
   * reply), all or none: one statement, so they meet once on the account row. A hold never shrinks. Throws
   * `insufficient_credits` when the balance cannot cover the growth together; the holds keep what they had. Returns
   * the holds in the order given (the new ones opened). Keyed holds are opened with `reserve`.
   */
  holdAll(items: HoldItem[]): Promise<Reservation[]>;
  /**
   * Throws `insufficient_credits` (402) when `reserve(input)` would, without holding or recording anything: for
   * work that starts later (a voice session starts when the call connects) but should be refused now.
   */
  check(input: MeterInput): Promise<void>;
  /** Current period's usage, for the X-Usage-* headers (cached briefly; may be a few ms stale). */
  snapshot(developerId: string): Promise<UsageSnapshot>;
}
