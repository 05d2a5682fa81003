import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { retryableStatus } from '../../kernel/errors/retry.ts';
import { withEncodedForm } from '../../kernel/net/form-body.ts';

/**
 * The one HTTP client of the engine adapters (vendor APIs and self-hosted model servers). Every call gets:
 *
 *  - a deadline for the response headers of each attempt (a vendor that accepts the connection and never answers
 *    fails as a retryable `timeout`); once the headers are in, the body streams for as long as it takes, bounded
 *    only by the caller's AbortSignal, so SSE and chunked audio are never buffered here;
 *  - retries where they are safe: a request the vendor never received (connection refused, unknown host) or
 *    refused with 429 is sent again whatever its method; a 408, 5xx, reset connection or header timeout only for a
 *    request that may run twice (`idempotent`: GET and friends, or a POST that only computes an answer). The wait
 *    is the vendor's `Retry-After` when it sends one, else a short jittered backoff; a wait longer than
 *    MAX_RETRY_WAIT_MS is not waited out here but left to the caller (the error stays retryable);
 *  - every failure as an EngineError carrying its retry policy (kernel/errors/engine-error.ts): the vendor's status
 *    and error body, `timeout`, `unavailable` for the network, `aborted` for the caller's own abort.
 */

export interface VendorRequest extends Omit<RequestInit, 'body' | 'signal' | 'headers'> {
  headers?: Record<string, string>;
  /** A JSON body: sent with `content-type: application/json` (and POST unless `method` says otherwise). */
  json?: unknown;
  /** A raw body: bytes, text, URLSearchParams or FormData (FormData is encoded up front: withEncodedForm). */
  body?: RequestInit['body'];
  signal?: AbortSignal;
  /**
   * Longest wait for the response headers of one attempt (default 60 s). Batch STT calls, which answer once the
   * audio is transcribed, and model-server renders pass longer ones (Infinity: no deadline but the caller's).
   */
  headersTimeoutMs?: number;
  /**
   * The request may reach the vendor twice without harm. Default: true for GET, HEAD, OPTIONS, PUT and DELETE.
   * Set it for a POST that only computes an answer (synthesis, transcription, embeddings, a chat completion);
   * leave it unset for a POST that creates something at the vendor (a job, an upload it bills for).
   */
  idempotent?: boolean;
  /** Attempts in all, retries included (default 3; 1 turns retries off). */
  attempts?: number;
}

export const DEFAULT_HEADERS_TIMEOUT_MS = 60_000;
const DEFAULT_ATTEMPTS = 3;
/** A vendor asking for a longer pause than this gets the error back instead (the job or the caller retries). */
export const MAX_RETRY_WAIT_MS = 5_000;
const BACKOFF_BASE_MS = 200;
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** Socket errors meaning the request never reached the vendor, so sending it again cannot run it twice. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

type Attempt = { res: Response } | { res?: undefined; error: EngineError; notSent: boolean };

/** Sends the request (with the retries above); resolves with a 2xx response whose body the caller reads. */
export async function vendorFetch(provider: string, url: string, req: VendorRequest = {}): Promise<Response> {
  const { json, body, headers, signal, headersTimeoutMs, idempotent, attempts, ...rest } = req;
  const method = (rest.method ?? (json !== undefined || body !== undefined ? 'POST' : 'GET')).toUpperCase();
  const init = await withEncodedForm({
    ...rest,
    method,
    headers: { ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: json !== undefined ? JSON.stringify(json) : body,
  });
  // A stream body can be sent once only.
  const replayable = !(init.body instanceof ReadableStream);
  const safe = idempotent ?? IDEMPOTENT_METHODS.has(method);
  const allowed = replayable ? (attempts ?? DEFAULT_ATTEMPTS) : 1;
  for (let n = 1; ; n++) {
    const attempt = await sendOnce(provider, url, init, signal, headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS);
    let error: EngineError;
    let wait: number | null;
    if (attempt.res) {
      if (attempt.res.ok) return attempt.res;
      error = await statusError(provider, attempt.res);
      wait = answerRetryWait(attempt.res, safe, n);
    } else {
      error = attempt.error;
      wait = error.kind !== 'aborted' && (attempt.notSent || safe) ? backoff(n) : null;
    }
    if (n >= allowed || wait === null || wait > MAX_RETRY_WAIT_MS || signal?.aborted) throw error;
    try {
      await sleep(wait, undefined, { signal });
    } catch (e) {
      throw EngineError.network(provider, e);
    }
  }
}

/** `vendorFetch` + a JSON answer. A 2xx body that is not JSON is an upstream (retryable) failure. */
export async function vendorJson<T>(provider: string, url: string, req: VendorRequest = {}): Promise<T> {
  const res = await vendorFetch(provider, url, req);
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    throw EngineError.network(provider, e);
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new EngineError(provider, 'upstream', `${provider} answered with a body that is not JSON`, true, res.status);
  }
}

/**
 * `vendorFetch` for an audio answer: a 2xx whose body is JSON, text or HTML is the vendor (or a proxy) reporting
 * something other than audio, so it fails as upstream rather than being played as noise.
 */
export async function vendorAudio(provider: string, url: string, req: VendorRequest): Promise<Response> {
  const res = await vendorFetch(provider, url, req);
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

/** The body of a 2xx response as the byte stream it is (SSE, chunked audio); a missing body is upstream's fault. */
export function responseBytes(provider: string, res: Response): AsyncIterable<Uint8Array> {
  if (!res.body)
    throw new EngineError(provider, 'upstream', `${provider} answered with an empty body`, true, res.status);
  return res.body as unknown as AsyncIterable<Uint8Array>;
}

/** Downloads a file the vendor produced (a URL the vendor returned, never a user's URL) to `path`, streaming. */
export async function downloadVendorFile(
  provider: string,
  url: string,
  path: string,
  signal: AbortSignal,
  req: VendorRequest = {},
): Promise<void> {
  const res = await vendorFetch(provider, url, { ...req, signal });
  const bytes = responseBytes(provider, res);
  try {
    await pipeline(Readable.from(bytes), createWriteStream(path), { signal });
  } catch (e) {
    throw EngineError.network(provider, e);
  }
}

/** Polls `check` until it returns a value (the vendor's job finished), every `intervalMs`, abortable. */
export async function pollVendor<T>(
  check: () => Promise<T | null>,
  opts: { intervalMs: number; signal?: AbortSignal; onWait?: (n: number) => void },
): Promise<T> {
  for (let n = 0; ; n++) {
    const v = await check();
    if (v !== null) return v;
    opts.onWait?.(n);
    await sleep(opts.intervalMs, undefined, { signal: opts.signal });
  }
}

/** A base URL without its trailing slashes, so paths join with one. */
export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

async function sendOnce(
  provider: string,
  url: string,
  init: RequestInit,
  signal: AbortSignal | undefined,
  headersTimeoutMs: number,
): Promise<Attempt> {
  const deadline = new AbortController();
  const timer = Number.isFinite(headersTimeoutMs)
    ? setTimeout(
        () => deadline.abort(new DOMException(`no response within ${headersTimeoutMs} ms`, 'TimeoutError')),
        headersTimeoutMs,
      )
    : undefined;
  try {
    const res = await fetch(url, {
      ...init,
      signal: signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal,
    });
    return { res };
  } catch (e) {
    // The caller's abort wins over our deadline when both fired.
    const why = signal?.aborted ? e : deadline.signal.aborted ? deadline.signal.reason : e;
    return { error: EngineError.network(provider, why), notSent: NOT_SENT.has(socketCode(e)) };
  } finally {
    clearTimeout(timer);
  }
}

async function statusError(provider: string, res: Response): Promise<EngineError> {
  const body = await res.text().catch(() => '');
  return EngineError.fromStatus(provider, res.status, body);
}

/** The pause before sending a failed request again, or null when this answer must not be retried. */
function answerRetryWait(res: Response, safe: boolean, n: number): number | null {
  // A 429 means the vendor did not take the request; 408 and 5xx may have half-run it.
  if (res.status !== 429 && !(safe && retryableStatus(res.status))) return null;
  return retryAfterMs(res.headers.get('retry-after')) ?? backoff(n);
}

/** Exponential backoff with jitter, so clients refused together do not come back together. */
function backoff(n: number): number {
  return BACKOFF_BASE_MS * 2 ** (n - 1) * (0.5 + Math.random() / 2);
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function socketCode(e: unknown): string {
  const cause = (e as { cause?: { code?: unknown } })?.cause;
  return typeof cause?.code === 'string' ? cause.code : '';
}
