import { EngineError } from '../../kernel/errors/engine-error.ts';

/**
 * What the TTS and STT vendor adapters share besides HTTP (that is core/vendor-client.ts): key checks, base URL
 * checks, model and parameter clamping, SSML escaping.
 */

/** The resolved provider key, or a permanent auth error when the route resolved none. */
export function requireKey(provider: string, label: string, key: string | undefined): string {
  if (!key) throw new EngineError(provider, 'auth', `${label} needs a provider key and none was given`, false);
  return key;
}

/** Validates an adapter's base URL at construction and drops a trailing slash. Throws on a bad value. */
export function normalizeBaseUrl(label: string, url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${label}: base URL "${url}" is not a URL`);
  }
  if (!/^(https?|wss?):$/.test(parsed.protocol)) throw new Error(`${label}: base URL must be http(s), got ${url}`);
  return url.replace(/\/+$/, '');
}

/** Response-header deadline of batch transcription calls (the vendor answers after transcribing). */
export const STT_HEADERS_TIMEOUT_MS = 600_000;

/** Model ids of the OpenAI speech API, which `/v1/audio/speech` may pass to any provider: only `openai` uses them. */
const OPENAI_TTS_MODELS = /^(tts-1(-hd)?|gpt-4o(-mini)?-tts.*)$/;

/** The request's model when it is meant for this vendor, else the adapter's default. */
export function vendorModel(requested: string | null | undefined, fallback: string): string {
  return requested && !OPENAI_TTS_MODELS.test(requested) ? requested : fallback;
}

export function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

export function escapeXml(s: string): string {
  return s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
}

/** Drops undefined fields so `{...DEFAULTS, ...opts}` keeps the defaults for options left unset. */
export function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * An adapter's options as it keeps them: its defaults, overridden by the values the caller set (undefined ones
 * keep the default), with the base URL checked and its trailing slash dropped. Throws on a bad base URL.
 */
export function adapterOptions<T extends { baseUrl?: string }>(
  label: string,
  defaults: NoInfer<T>,
  opts: NoInfer<Partial<T>>,
): T {
  const merged: T = { ...defaults, ...stripUndefined(opts) };
  if (merged.baseUrl) merged.baseUrl = normalizeBaseUrl(label, merged.baseUrl);
  return merged;
}

/** Refuses, at construction, a sample rate the vendor's PCM output does not offer. */
export function checkSampleRate(label: string, rate: number, supported: readonly number[]): void {
  if (!supported.includes(rate)) throw new Error(`${label}: unsupported sample rate ${rate}`);
}
