import { byokHeaderFor } from '../../contracts/providers.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';

/** Where a provider key came from. Caller-supplied keys (header or stored) are never metered. */
export interface ResolvedKey {
  key: string;
  source: 'header' | 'stored' | 'platform';
  billable: boolean;
}

/** Stored provider keys of a developer, decrypted on demand (implemented by the credits issue). */
export interface StoredKeyLookup {
  get(developerId: string, vendor: string): Promise<string | null>;
}

/** Incoming request headers (lower-cased names), a job's opened caller keys in the same shape, or {}. */
export type ProviderKeyHeaders = Record<string, string | string[] | undefined>;

/** Where keys come from besides the request: the developer's stored keys and the operator's platform keys (Infra). */
export interface KeySources {
  storedKeys: StoredKeyLookup;
  config: { vendors: { platformKeys: Record<string, string | undefined> } };
}

interface KeyCall {
  developerId: string;
  /** `X-Provider-Key-<Vendor>` headers: the request's, or a job's opened caller keys; {} for stored/platform only. */
  headers?: ProviderKeyHeaders;
  /** The contract's "requires the caller's own provider key" vendors: the platform's key is never used. */
  callerKeyOnly?: boolean;
}

/** A call to an engine: its provider id names the vendor, and an engine that runs here needs no key. */
export interface EngineKeyCall extends KeyCall {
  engine: { provider: string; capabilities: { requiresKey: boolean } };
}

/** A call straight to a vendor (a video vendor, an agent sync target): always keyed. */
export interface VendorKeyCall extends KeyCall {
  vendor: string;
}

/**
 * The one answer to "which key serves this call": the caller's `X-Provider-Key-<Vendor>` header → the developer's
 * stored key → the platform's key → a clear 400 `provider_unavailable` naming what to send. Only the platform's key
 * is billable. An engine that needs no key (a local engine) gets null: it runs on the platform and is metered.
 */
export function resolveProviderKey(keys: KeySources, call: VendorKeyCall): Promise<ResolvedKey>;
export function resolveProviderKey(keys: KeySources, call: EngineKeyCall): Promise<ResolvedKey | null>;
export async function resolveProviderKey(
  keys: KeySources,
  call: VendorKeyCall | EngineKeyCall,
): Promise<ResolvedKey | null> {
  if ('engine' in call && !call.engine.capabilities.requiresKey) return null;
  const vendor = 'engine' in call ? call.engine.provider : call.vendor;
  const header = byokHeaderFor(vendor);
  const fromHeader = header ? call.headers?.[header] : undefined;
  const headerValue = Array.isArray(fromHeader) ? fromHeader[0] : fromHeader;
  if (headerValue) return { key: headerValue, source: 'header', billable: false };
  const stored = await keys.storedKeys.get(call.developerId, vendor);
  if (stored) return { key: stored, source: 'stored', billable: false };
  const platform = call.callerKeyOnly ? undefined : keys.config.vendors.platformKeys[vendor];
  if (platform) return { key: platform, source: 'platform', billable: true };
  const how = header ? `send the ${headerName(header)} header, ` : '';
  throw new ApiError(
    'provider_unavailable',
    {
      provider: vendor,
      detail: `no API key: ${how}store one with POST /v1/provider-keys, or ask the operator to configure a platform key`,
    },
    'provider',
  );
}

function headerName(lower: string): string {
  return lower.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase());
}
