import type { Config } from '../../kernel/config/index.ts';
import type { MeterCategory } from './types.ts';

/**
 * The credit-weight table: credits per unit, by category (the default) and by operation (an override).
 * A charge is `ceil(units × weight)` credits, with a minimum of 1 for any billable operation with units > 0.
 * docs/billing.md shows this table; CREDIT_WEIGHTS overrides entries without a code change.
 */
export const CATEGORY_WEIGHTS: Record<MeterCategory, { perUnit: number; unit: string }> = {
  tts: { perUnit: 1, unit: 'characters' },
  stt: { perUnit: 5, unit: 'audio seconds' },
  llm: { perUnit: 0.1, unit: 'tokens (input + output)' },
  rag: { perUnit: 0.02, unit: 'embedded tokens' },
  video: { perUnit: 50, unit: 'generated video seconds' },
  session: { perUnit: 20, unit: 'connected minutes' },
};

export const OPERATION_WEIGHTS: Record<string, { category: MeterCategory; perUnit: number; unit: string }> = {
  synthesize: { category: 'tts', perUnit: 1, unit: 'characters' },
  'audio.speech': { category: 'tts', perUnit: 1, unit: 'characters' },
  'agent.speak': { category: 'tts', perUnit: 1, unit: 'characters' },
  transcribe: { category: 'stt', perUnit: 5, unit: 'audio seconds' },
  'audio.transcriptions': { category: 'stt', perUnit: 5, unit: 'audio seconds' },
  chat: { category: 'llm', perUnit: 0.1, unit: 'tokens (input + output)' },
  'call.analyze': { category: 'llm', perUnit: 0.1, unit: 'tokens (input + output)' },
  ingest: { category: 'rag', perUnit: 0.02, unit: 'embedded tokens' },
  search: { category: 'rag', perUnit: 1, unit: 'queries' },
  'video.generate': { category: 'video', perUnit: 100, unit: 'generated video seconds' },
  'video.avatar': { category: 'video', perUnit: 50, unit: 'generated video seconds' },
  'video.lipsync': { category: 'video', perUnit: 40, unit: 'generated video seconds' },
  'video.dub': { category: 'video', perUnit: 80, unit: 'generated video seconds' },
  'video.analyze': { category: 'video', perUnit: 10, unit: 'input video seconds' },
  'session.minutes': { category: 'session', perUnit: 20, unit: 'connected minutes' },
};

export interface CreditWeights {
  /** Credits per unit for an operation (falls back to its category's default). */
  weight(category: MeterCategory, operation: string): number;
  /** Credits for a number of units: ceil(units × weight), at least 1 when units > 0. */
  credits(category: MeterCategory, operation: string, units: number): number;
}

const memo = new WeakMap<Config, CreditWeights>();

export function creditWeights(config: Config): CreditWeights {
  let w = memo.get(config);
  if (w) return w;
  const overrides = new Map<string, number>();
  for (const pair of (config.CREDIT_WEIGHTS ?? '').split(',').filter(Boolean)) {
    const i = pair.lastIndexOf(':');
    overrides.set(pair.slice(0, i), Number(pair.slice(i + 1)));
  }
  const weight = (category: MeterCategory, operation: string): number =>
    overrides.get(operation) ??
    OPERATION_WEIGHTS[operation]?.perUnit ??
    overrides.get(category) ??
    CATEGORY_WEIGHTS[category].perUnit;
  w = {
    weight,
    credits(category, operation, units) {
      if (!(units > 0)) return 0;
      // Rounded to 6 decimals first so that 0.1 × 30 does not become 3.0000000000000004 → 4.
      const exact = Math.round(units * weight(category, operation) * 1e6) / 1e6;
      return exact === 0 ? 0 : Math.max(1, Math.ceil(exact));
    },
  };
  memo.set(config, w);
  return w;
}
