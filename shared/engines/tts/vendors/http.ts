import { withEncodedForm } from '../../../kernel/net/form-body.ts';
import { EngineError } from '../../../kernel/errors/engine-error.ts';

/**
 * HTTP plumbing every vendor adapter (TTS and STT) shares: key checks, URL joining, a fetch that maps network
 * failures and non-2xx answers to EngineError (vendor 4xx permanent except 408/429; network and 5xx retryable),
 * and an abortable delay for polling APIs.
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

export interface VendorInit extends RequestInit {
  /**
   * Longest wait for the response headers (default 60 s); the body may then stream for as long as it takes. STT
   * calls, which answer only once the audio is transcribed, pass a longer one.
   */
  headersTimeoutMs?: number;
}

/** Response-header deadline of batch transcription calls (the vendor answers after transcribing). */
export const STT_HEADERS_TIMEOUT_MS = 600_000;

/**
 * `fetch` that turns network failures and non-2xx answers into EngineError (with the vendor's error body). A vendor
 * that accepts the connection but never answers fails as a retryable `timeout` after `headersTimeoutMs`.
 */
export async function vendorFetch(provider: string, url: string, init: VendorInit): Promise<Response> {
  const { headersTimeoutMs = 60_000, ...rest } = init;
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DOMException(`no response within ${headersTimeoutMs} ms`, 'TimeoutError')),
    headersTimeoutMs,
  );
  const signal = rest.signal ? AbortSignal.any([rest.signal, deadline.signal]) : deadline.signal;
  let res: Response;
  try {
    res = await fetch(url, { ...(await withEncodedForm(rest)), signal });
  } catch (e) {
    throw EngineError.network(provider, deadline.signal.aborted ? deadline.signal.reason : e);
  } finally {
    clearTimeout(timer);
  }
  if (!res.ok) {
    const body = await res.text().catch(() => '');
    throw EngineError.fromStatus(provider, res.status, body);
  }
  return res;
}

/**
 * `vendorFetch` for an audio answer: a 2xx whose body is JSON, text or HTML is the vendor (or a proxy) reporting
 * something other than audio, so it fails as upstream rather than being played as noise.
 */
export async function vendorAudio(provider: string, url: string, init: VendorInit): Promise<Response> {
  const res = await vendorFetch(provider, url, init);
  const type = res.headers.get('content-type') ?? '';
  if (/json|text\/|html|xml/i.test(type)) {
    const body = await res.text().catch(() => '');
    throw new EngineError(
      provider,
      'upstream',
      `${provider} answered ${type} instead of audio: ${body.slice(0, 200)}`,
      true,
      res.status,
    );
  }
  return res;
}

/** `vendorFetch` + JSON body. A body that is not JSON is an upstream (retryable) failure. */
export async function vendorJson<T>(provider: string, url: string, init: VendorInit): Promise<T> {
  const res = await vendorFetch(provider, url, init);
  const text = await res.text().catch((e: unknown) => {
    throw EngineError.network(provider, e);
  });
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new EngineError(provider, 'upstream', `${provider} answered with a body that is not JSON`, true, res.status);
  }
}

/** Waits `ms` unless the signal aborts first (polling loops of asynchronous vendor APIs). */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new DOMException('aborted', 'AbortError'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason ?? new DOMException('aborted', 'AbortError'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

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
