import type { Meter, MeterCategory } from '../../../shared/billing/types.ts';
import type { SessionEngines } from '../../../shared/realtime/engines.ts';

export interface SessionUsage {
  developerId: string;
  sessionId: string;
  engines: SessionEngines;
  llm: { provider: string; billable: boolean };
  sttAudioSeconds: number;
  ttsChars: number;
  llmTokens: number;
}

/**
 * The engines' own usage of a session (the minutes are settled by the session's hold): recorded always, billable
 * only where a platform key served them. The usage already happened, so each item is a 0-unit hold settled at the
 * actual units (charged as far as the balance goes on a hard-limit tier, never refused).
 */
export async function settleEngineUsage(meter: Meter, u: SessionUsage): Promise<void> {
  const items: Array<{
    category: MeterCategory;
    units: number;
    unit: string;
    provider: string;
    billable: boolean;
    operation: string;
  }> = [
    {
      category: 'stt',
      units: Math.ceil(u.sttAudioSeconds),
      unit: 'audio seconds',
      provider: u.engines.sttProvider,
      billable: u.engines.sttKey?.billable ?? false,
      operation: 'session.stt',
    },
    {
      category: 'tts',
      units: u.ttsChars,
      unit: 'characters',
      provider: u.engines.ttsProvider,
      billable: u.engines.ttsKey?.billable ?? false,
      operation: 'session.tts',
    },
    {
      category: 'llm',
      units: u.llmTokens,
      unit: 'tokens (input + output)',
      provider: u.llm.provider,
      billable: u.llm.billable,
      operation: 'session.llm',
    },
  ];
  for (const it of items) {
    if (it.units <= 0) continue;
    const r = await meter
      .reserve({ developerId: u.developerId, requestId: u.sessionId, ...it, units: 0 })
      .catch(() => null);
    if (r) await r.commit(it.units);
  }
}
