import type { Config } from '../../kernel/config/index.ts';
import { isEngineError } from '../../kernel/errors/engine-error.ts';
import { trimSlash, vendorFetch } from '../../engines/core/vendor-client.ts';

/** How to check a vendor key: the vendor's cheapest authenticated call (a list or account read, never a paid one). */
interface Verifier {
  url(base: string | undefined): string;
  headers(key: string): Record<string, string>;
}

const root = (base: string | undefined, fallback: string): string => trimSlash(base ?? fallback).replace(/\/v\d+$/, '');
const trim = (base: string | undefined, fallback: string): string => trimSlash(base ?? fallback);
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/**
 * Base-URL conventions follow the engines': `OPENAI_BASE_URL`/`GROQ_BASE_URL` include the API version path
 * (OpenAI-compatible servers), the others are API roots.
 */
export const VERIFIERS: Record<string, Verifier> = {
  openai: { url: (b) => `${trim(b, 'https://api.openai.com/v1')}/models`, headers: bearer },
  groq: { url: (b) => `${trim(b, 'https://api.groq.com/openai/v1')}/models`, headers: bearer },
  anthropic: {
    url: (b) => `${root(b, 'https://api.anthropic.com')}/v1/models?limit=1`,
    headers: (k) => ({ 'x-api-key': k, 'anthropic-version': '2023-06-01' }),
  },
  elevenlabs: {
    url: (b) => `${root(b, 'https://api.elevenlabs.io')}/v1/user`,
    headers: (k) => ({ 'xi-api-key': k }),
  },
  deepgram: {
    url: (b) => `${root(b, 'https://api.deepgram.com')}/v1/projects`,
    headers: (k) => ({ authorization: `Token ${k}` }),
  },
  assemblyai: {
    url: (b) => `${root(b, 'https://api.assemblyai.com')}/v2/transcript?limit=1`,
    headers: (k) => ({ authorization: k }),
  },
  cartesia: {
    url: (b) => `${root(b, 'https://api.cartesia.ai')}/voices?limit=1`,
    headers: (k) => ({ 'x-api-key': k, 'cartesia-version': '2025-04-16' }),
  },
  replicate: { url: (b) => `${root(b, 'https://api.replicate.com')}/v1/account`, headers: bearer },
  lmnt: {
    url: (b) => `${root(b, 'https://api.lmnt.com')}/v1/account`,
    headers: (k) => ({ 'x-api-key': k }),
  },
  cohere: { url: (b) => `${root(b, 'https://api.cohere.com')}/v1/models?page_size=1`, headers: bearer },
  deepl: {
    url: (b) => `${root(b, 'https://api.deepl.com')}/v2/usage`,
    headers: (k) => ({ authorization: `DeepL-Auth-Key ${k}` }),
  },
};

export type VerifyOutcome =
  | { kind: 'valid' }
  | { kind: 'rejected'; status: number }
  | { kind: 'unreachable'; detail: string }
  | { kind: 'unsupported' };

/**
 * Calls the vendor with the key, within one deadline for the whole check (retries of a 5xx or a dropped connection
 * included: the vendor client's, as the call only reads). 401/403 mean the key is wrong; anything else unexpected is
 * the vendor's fault.
 */
export async function verifyVendorKey(
  config: Config,
  vendor: string,
  key: string,
  signal?: AbortSignal,
): Promise<VerifyOutcome> {
  const v = VERIFIERS[vendor];
  if (!v) return { kind: 'unsupported' };
  const timeout = AbortSignal.timeout(Math.min(config.OUTBOUND_TIMEOUT_MS, 15_000));
  try {
    const res = await vendorFetch(vendor, v.url(config.vendors.baseUrls[vendor]), {
      headers: { accept: 'application/json', ...v.headers(key) },
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    await res.body?.cancel().catch(() => {});
    return { kind: 'valid' };
  } catch (e) {
    if (!isEngineError(e)) throw e;
    if (e.kind === 'auth') return { kind: 'rejected', status: e.status ?? 401 };
    if (e.status !== undefined) return { kind: 'unreachable', detail: `HTTP ${e.status}` };
    return { kind: 'unreachable', detail: e.kind === 'timeout' ? 'timed out' : 'network error' };
  }
}
