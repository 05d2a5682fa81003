import type { Voice } from '../types.ts';

/** [id, display name, language, gender] of a vendor's stock voice. */
export type StockVoice = readonly [id: string, name: string, language: string, gender: Voice['gender']];

/**
 * A vendor's well-known stock voices, as a static list (documented ids at the time of writing, not fetched from
 * the vendor: `voices()` takes no key). Any other voice id of the vendor, e.g. a cloned voice, still works as
 * `voiceId`.
 */
export function stockVoices(provider: string, list: readonly StockVoice[]): Voice[] {
  return list.map(([id, name, language, gender]) => ({ id, name, language, gender, provider }));
}
