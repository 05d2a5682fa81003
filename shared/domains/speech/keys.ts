import { resolveProviderKey, type ResolvedKey } from '../../platform/keys/provider-key.ts';
import type { Infra } from '../../platform/infra.ts';

/** Incoming request headers (lower-cased names), or a job's opened caller keys in the same shape. */
export type ProviderKeyHeaders = Record<string, string | string[] | undefined>;

/**
 * Resolves the vendor key of a keyed engine: the caller's `X-Provider-Key-<Vendor>` (a request's header, or the
 * sealed copy a job carries), then the developer's stored key, then the platform key. Local engines need none.
 */
export async function keyFor(
  infra: Infra,
  engine: { provider: string; capabilities: { requiresKey: boolean } },
  developerId: string,
  headers: ProviderKeyHeaders,
): Promise<ResolvedKey | null> {
  if (!engine.capabilities.requiresKey) return null;
  return resolveProviderKey({
    vendor: engine.provider,
    developerId,
    headers,
    stored: infra.storedKeys,
    platform: infra.config.vendors.platformKeys,
  });
}
