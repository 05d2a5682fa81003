import { resolveProviderKey, type ResolvedKey } from '../../platform/keys/provider-key.ts';
import type { Infra } from '../../platform/infra.ts';
import { jobKeyHeaders, type JobRef, type RequestHeaders } from './job-keys.ts';

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
 * The key for a commercial provider, or null for local/self-hosted ones: the caller's `X-Provider-Key-<Vendor>`
 * header, then the developer's stored key (POST /v1/provider-keys), then the platform key where allowed. At
 * submission `headers` are the request's; in a worker they are the job's sealed caller keys (resolveJobVideoKey).
 * Throws 400 provider_unavailable when there is none.
 */
export async function resolveVideoKey(
  infra: Infra,
  provider: string,
  developerId: string,
  headers: RequestHeaders,
): Promise<ResolvedKey | null> {
  const v = VIDEO_VENDORS[provider];
  if (!v) return null;
  return resolveProviderKey({
    vendor: v.vendor,
    developerId,
    headers,
    stored: infra.storedKeys,
    platform: v.callerKeyOnly ? {} : infra.config.vendors.platformKeys,
  });
}

/** In a worker, just before the vendor call: the job's sealed caller key first, then stored, then platform. */
export async function resolveJobVideoKey(infra: Infra, job: JobRef, provider: string): Promise<ResolvedKey | null> {
  const v = VIDEO_VENDORS[provider];
  if (!v) return null;
  return resolveVideoKey(infra, provider, job.owner_id, await jobKeyHeaders(infra, job, v.vendor));
}
