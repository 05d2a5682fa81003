import { z } from 'zod';
import { VENDOR_IDS } from '../../vendors.ts';

/** `ELEVENLABS_API_KEY`, `ELEVENLABS_BASE_URL`, … for every vendor the platform can call. */
export function vendorEnvName(vendor: string, suffix: 'API_KEY' | 'BASE_URL'): string {
  return `${vendor.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_${suffix}`;
}

/**
 * Platform keys (the operator's own vendor accounts, metered to developers) and base-URL overrides (a
 * self-hosted compatible server, or a local protocol double in tests). All optional: a vendor with no platform
 * key is served only with the caller's key.
 */
export const providersEnv = Object.fromEntries(
  VENDOR_IDS.flatMap((v) => [
    [vendorEnvName(v, 'API_KEY'), z.string().min(1).optional()],
    [vendorEnvName(v, 'BASE_URL'), z.url({ protocol: /^(https?|wss?)$/ }).optional()],
  ]),
) as Record<string, z.ZodOptional<z.ZodString>>;

export interface VendorSettings {
  platformKeys: Record<string, string | undefined>;
  baseUrls: Record<string, string | undefined>;
}

export function vendorSettings(env: Record<string, unknown>): VendorSettings {
  const platformKeys: Record<string, string | undefined> = {};
  const baseUrls: Record<string, string | undefined> = {};
  for (const v of VENDOR_IDS) {
    platformKeys[v] = env[vendorEnvName(v, 'API_KEY')] as string | undefined;
    baseUrls[v] = env[vendorEnvName(v, 'BASE_URL')] as string | undefined;
  }
  return { platformKeys, baseUrls };
}
