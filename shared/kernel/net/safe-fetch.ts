import { lookup as dnsLookup } from 'node:dns';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import { ApiError } from '../errors/api-error.ts';
import type { AddressPolicy } from './address-policy.ts';

export interface SafeFetchOptions {
  policy: AddressPolicy;
  maxBytes: number;
  timeoutMs: number;
  signal?: AbortSignal;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  maxRedirects?: number;
  /** Name of the request field the URL came from, for error messages (`audioUrl`, `video_url`…). */
  param?: string;
}

export interface SafeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  url: string;
  /** Streams the body; errors with `payload_too_large` once more than maxBytes arrive. */
  body: Readable;
}

/**
 * Fetches a user-supplied URL without letting it reach private networks. The check runs inside the socket's
 * DNS lookup, so the address that is validated is the address that is connected to (no DNS-rebinding window),
 * and every redirect hop is checked again. Size and time are bounded.
 */
export async function safeFetch(rawUrl: string, opts: SafeFetchOptions): Promise<SafeResponse> {
  const param = opts.param ?? 'url';
  let url = parseUserUrl(rawUrl, param);
  for (let hop = 0; hop <= (opts.maxRedirects ?? 5); hop++) {
    const res = await requestOnce(url, opts, param);
    const location = res.headers.location;
    if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location) {
      res.resume();
      url = parseUserUrl(new URL(location, url).toString(), param);
      continue;
    }
    const declared = Number(res.headers['content-length'] ?? 0);
    if (declared > opts.maxBytes) {
      res.destroy();
      throw new ApiError('payload_too_large', { what: `body at ${param}`, limit: formatBytes(opts.maxBytes) }, param);
    }
    return {
      status: res.statusCode ?? 0,
      headers: res.headers,
      url: url.toString(),
      body: limitBody(res, opts, param),
    };
  }
  throw new ApiError('url_fetch_failed', { detail: 'too many redirects' }, param);
}

/** Fetches into memory; non-2xx is an error naming the status. */
export async function safeFetchBuffer(
  rawUrl: string,
  opts: SafeFetchOptions,
): Promise<{ buf: Buffer; contentType: string }> {
  const res = await safeFetch(rawUrl, opts);
  if (res.status < 200 || res.status >= 300) {
    res.body.resume();
    throw new ApiError('url_fetch_failed', { detail: `HTTP ${res.status}` }, opts.param ?? 'url');
  }
  const chunks: Buffer[] = [];
  for await (const c of res.body) chunks.push(c as Buffer);
  return { buf: Buffer.concat(chunks), contentType: String(res.headers['content-type'] ?? '') };
}

/** Parses a user URL: http(s) only, no embedded credentials; 400 `invalid_url` naming the field otherwise. */
export function parseUserUrl(raw: string, param: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError('invalid_url', { detail: `${param} is not a valid URL` }, param);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ApiError('invalid_url', { detail: `${param} must be an http or https URL` }, param);
  }
  if (url.username || url.password) {
    throw new ApiError('invalid_url', { detail: `${param} must not carry credentials` }, param);
  }
  return url;
}

function guardedLookup(policy: AddressPolicy, hostAllowed: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses as { address: string; family: number }[];
      const bad = list.find((a) => !hostAllowed && !policy.addressAllowed(a.address));
      if (bad) {
        const e = new Error(bad.address) as NodeJS.ErrnoException;
        e.code = 'EBLOCKED';
        return callback(e, '', 4);
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}

function requestOnce(url: URL, opts: SafeFetchOptions, param: string): Promise<http.IncomingMessage> {
  const hostAllowed = opts.policy.hostAllowed(url.hostname);
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    // Literal IPs skip DNS, so check them here.
    if (/^[\d.]+$|:/.test(literal) && !hostAllowed && !opts.policy.addressAllowed(literal)) {
      return reject(new ApiError('url_not_allowed', { detail: literal }, param));
    }
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(
      url,
      {
        method: opts.method ?? 'GET',
        headers: { 'user-agent': 'voice-agent-platform/1.0', ...opts.headers },
        lookup: guardedLookup(opts.policy, hostAllowed),
        timeout: opts.timeoutMs,
        signal: opts.signal,
      },
      resolve,
    );
    req.on('timeout', () => req.destroy(new ApiError('url_fetch_failed', { detail: 'timed out' }, param)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e instanceof ApiError) return reject(e);
      if (e.code === 'EBLOCKED') return reject(new ApiError('url_not_allowed', { detail: e.message }, param));
      if (e.name === 'AbortError') return reject(e);
      reject(new ApiError('url_fetch_failed', { detail: e.code ?? e.message }, param));
    });
    req.end(opts.body);
  });
}

function limitBody(res: http.IncomingMessage, opts: SafeFetchOptions, param: string): Readable {
  const out = new PassThrough();
  let seen = 0;
  const deadline = setTimeout(
    () => out.destroy(new ApiError('url_fetch_failed', { detail: 'body download timed out' }, param)),
    opts.timeoutMs,
  );
  res.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > opts.maxBytes) {
      res.destroy();
      out.destroy(
        new ApiError('payload_too_large', { what: `body at ${param}`, limit: formatBytes(opts.maxBytes) }, param),
      );
      return;
    }
    if (!out.write(chunk)) res.pause();
  });
  out.on('drain', () => res.resume());
  res.on('end', () => {
    clearTimeout(deadline);
    out.end();
  });
  res.on('error', (e) => {
    clearTimeout(deadline);
    out.destroy(e);
  });
  out.on('close', () => clearTimeout(deadline));
  return out;
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Math.round((n / 1024 / 1024) * 10) / 10} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} bytes`;
}
