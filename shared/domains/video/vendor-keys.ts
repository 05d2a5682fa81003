import { resolveProviderKey, type ResolvedKey } from '../../platform/keys/provider-key.ts';
import type { Infra } from '../../platform/infra.ts';
import { jobKeyHeaders, type JobRef } from './job-keys.ts';

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
 * In a worker, just before the vendor call: the key of a commercial provider, or null for local/self-hosted ones.
 * The job's sealed caller key (the request's `X-Provider-Key-<Vendor>`) first, then the developer's stored key,
 * then the platform key where the vendor allows it; 400 provider_unavailable when there is none.
 */
export async function resolveJobVideoKey(infra: Infra, job: JobRef, provider: string): Promise<ResolvedKey | null> {
  const v = VIDEO_VENDORS[provider];
  if (!v) return null;
  return resolveProviderKey(infra, {
    ...v,
    developerId: job.owner_id,
    headers: await jobKeyHeaders(infra, job, v.vendor),
  });
}
