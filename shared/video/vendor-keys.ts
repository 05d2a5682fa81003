import { resolveProviderKey, type ResolvedKey } from '../engines/core/provider-key.ts';
import type { Infra } from '../runtime/infra.ts';

/**
 * Commercial video providers and where their key may come from. `callerKeyOnly`: the contract's "requires the
 * caller's own provider key" engines never use the operator's platform key.
 */
export const VIDEO_VENDORS: Record<string, { vendor: string; callerKeyOnly: boolean }> = {
  heygen: { vendor: 'heygen', callerKeyOnly: true },
  synclabs: { vendor: 'synclabs', callerKeyOnly: true },
  luma: { vendor: 'luma', callerKeyOnly: false },
  runway: { vendor: 'runway', callerKeyOnly: false },
  replicate: { vendor: 'replicate', callerKeyOnly: false },
  twelvelabs: { vendor: 'twelvelabs', callerKeyOnly: true },
};

/**
 * The key for a commercial provider, or null for local/self-hosted ones. Jobs run after the request is gone, so
 * only keys that outlive it count: the developer's stored key (POST /v1/provider-keys), then the platform key.
 * Throws 400 provider_unavailable when there is none.
 */
export async function resolveVideoKey(
  infra: Infra,
  provider: string,
  developerId: string,
): Promise<ResolvedKey | null> {
  const v = VIDEO_VENDORS[provider];
  if (!v) return null;
  return resolveProviderKey({
    vendor: v.vendor,
    developerId,
    headers: {},
    stored: infra.storedKeys,
    platform: v.callerKeyOnly ? {} : infra.config.vendors.platformKeys,
  });
}
