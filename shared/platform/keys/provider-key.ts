import { byokHeaderFor } from '../../kernel/contracts/providers.ts';
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

export interface KeyResolutionInput {
  vendor: string;
  developerId: string;
  /** Incoming request headers (lower-cased names), or {} for work with no request (jobs carry none). */
  headers: Record<string, string | string[] | undefined>;
  stored: StoredKeyLookup;
  /** Platform keys from the operator's environment, by vendor. */
  platform: Record<string, string | undefined>;
}

/**
 * Resolution order: the caller's `X-Provider-Key-<Name>` header → the developer's stored key → the platform's
 * key → a clear 400 naming what is missing.
 */
export async function resolveProviderKey(input: KeyResolutionInput): Promise<ResolvedKey> {
  const header = byokHeaderFor(input.vendor);
  const fromHeader = header ? input.headers[header] : undefined;
  const headerValue = Array.isArray(fromHeader) ? fromHeader[0] : fromHeader;
  if (headerValue) return { key: headerValue, source: 'header', billable: false };
  const stored = await input.stored.get(input.developerId, input.vendor);
  if (stored) return { key: stored, source: 'stored', billable: false };
  const platform = input.platform[input.vendor];
  if (platform) return { key: platform, source: 'platform', billable: true };
  const how = header ? `send the ${headerName(header)} header, ` : '';
  throw new ApiError(
    'provider_unavailable',
    {
      provider: input.vendor,
      detail: `no API key: ${how}store one with POST /v1/provider-keys, or ask the operator to configure a platform key`,
    },
    'provider',
  );
}

function headerName(lower: string): string {
  return lower.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase());
}
