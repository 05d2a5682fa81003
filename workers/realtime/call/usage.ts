import type { Meter, MeterCategory, MeterInput, Reservation } from '../../../shared/platform/metering/types.ts';
import type { SessionEngines } from '../../../shared/domains/realtime/engines.ts';
import { TEST_TRAFFIC_PROVIDER_PREFIX } from '../../../shared/contracts/agent-tests.ts';
import type { AgentTestPlatform } from '../../../shared/kernel/config/index.ts';

/** What a session meters: its connected minutes and its engines' own usage. */
export type SessionMeterKind = 'minutes' | 'stt' | 'tts' | 'llm';

export interface SessionMeterItem {
  category: MeterCategory;
  operation: string;
  unit: string;
  provider: string;
  /** False where the caller's own key (or a local engine) served it: recorded, never charged. */
  billable: boolean;
}

/**
 * The four ledger items of a session: minutes (always billable) and STT, TTS and LLM by who served them. An agent
 * test's call (`test`: the kind of its private platform) is test traffic: every item is recorded with the provider
 * `agent-test:<provider>`. Offline (`scripted`, `local`: a scripted or local LLM, the simulated STT, the local TTS)
 * it is charged nothing; `metered` (the agent's own vendor LLM, with the deployment's keys) is charged like any call,
 * except its STT, which on a test platform is always the simulated one or the local engine and costs nobody anything.
 */
export function sessionMeterItems(
  engines: SessionEngines,
  llm: { provider: string; billable: boolean },
  channel: string,
  test: AgentTestPlatform | null = null,
): Record<SessionMeterKind, SessionMeterItem> {
  const items = sessionItems(engines, llm, channel);
  if (!test) return items;
  for (const item of Object.values(items)) {
    item.provider = `${TEST_TRAFFIC_PROVIDER_PREFIX}${item.provider}`;
    if (test !== 'metered') item.billable = false;
  }
  items.stt.billable = false;
  return items;
}

/**
 * The STT item of the audio a fallback engine heard (`provider`, the local recogniser): the session's STT item under
 * that provider (an agent test's prefix kept), never charged.
 */
export function fallbackSttItem(stt: SessionMeterItem, ownProvider: string, provider: string): SessionMeterItem {
  const prefix = stt.provider.endsWith(ownProvider)
    ? stt.provider.slice(0, stt.provider.length - ownProvider.length)
    : '';
  return { ...stt, provider: `${prefix}${provider}`, billable: false };
}

function sessionItems(
  engines: SessionEngines,
  llm: { provider: string; billable: boolean },
  channel: string,
): Record<SessionMeterKind, SessionMeterItem> {
  return {
    minutes: {
      category: 'session',
      operation: 'session.minutes',
      unit: 'connected minutes',
      provider: channel,
      billable: true,
    },
    stt: {
      category: 'stt',
      operation: 'session.stt',
      unit: 'audio seconds',
      provider: engines.sttProvider,
      billable: engines.sttKey?.billable ?? false,
    },
    tts: {
      category: 'tts',
      operation: 'session.tts',
      unit: 'characters',
      provider: engines.ttsProvider,
      billable: engines.ttsKey?.billable ?? false,
    },
    llm: {
      category: 'llm',
      operation: 'session.llm',
      unit: 'tokens (input + output)',
      provider: llm.provider,
      billable: llm.billable,
    },
  };
}

/**
 * One ledger row that grows with a call: opened at the first units it must cover, grown (`cover`) before the work
 * that will use them, committed at the end to what was used. A grow the balance cannot cover throws
 * `insufficient_credits` and leaves the hold as it was.
 */
export class RunningHold {
  private hold: Reservation | null = null;
  private opening: Promise<Reservation> | null = null;
  private heldUnits = 0;

  constructor(
    private readonly meter: Meter,
    /** Read when the hold opens (the session's API key is known by then). */
    private readonly base: () => Omit<MeterInput, 'units'>,
  ) {}

  /** Units the hold covers now. */
  get units(): number {
    return this.heldUnits;
  }

  /**
   * Grows these holds together, each to at least its units: one statement (`Meter.holdAll`), all or none. Throws
   * `insufficient_credits` when the balance cannot cover the growth together.
   */
  static async coverAll(meter: Meter, wanted: Array<[RunningHold, number]>): Promise<void> {
    // A hold still opening (the first minute's) is waited for: it must not be opened twice.
    await Promise.all(wanted.map(([h]) => h.opening?.catch(() => undefined)));
    const todo = wanted.filter(([h, units]) => !(units <= h.heldUnits && (h.hold || units <= 0)));
    if (todo.length === 0) return;
    const got = await meter.holdAll(
      todo.map(([h, units]) => ({ hold: h.hold, input: { ...h.base(), units: Math.max(0, units) } })),
    );
    todo.forEach(([h, units], i) => {
      h.hold = got[i]!;
      h.heldUnits = Math.max(h.heldUnits, units);
    });
  }

  /** Grows the hold to at least `units` (never shrinks it). */
  async cover(units: number): Promise<void> {
    if (units <= this.heldUnits && (this.hold || units <= 0)) return;
    if (!this.hold) {
      this.opening ??= this.meter.reserve({ ...this.base(), units: Math.max(0, units) });
      try {
        this.hold = await this.opening;
      } finally {
        this.opening = null;
      }
      this.heldUnits = Math.max(this.heldUnits, units);
      return;
    }
    await this.hold.extendTo(units);
    this.heldUnits = units;
  }

  /**
   * Settles at the units used. Usage past the hold is charged as far as the balance goes and the rest recorded as
   * waived with `waivedReason` (the ledger row says so; nothing is dropped silently).
   */
  async commit(actual: number, waivedReason: string): Promise<void> {
    if (!this.hold && actual <= 0) return;
    // Usage nothing was reserved for (the call ended before a reply was reserved): a 0-unit hold settled at it.
    this.hold ??= await this.meter.reserve({ ...this.base(), units: 0 });
    await this.hold.commit(actual, { waivedReason });
  }
}
