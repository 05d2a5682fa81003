import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError } from '../../kernel/errors/engine-error.ts';

/** JSON call to a vendor API; non-2xx becomes an EngineError carrying its retry policy. */
export async function vendorJson<T>(
  provider: string,
  url: string,
  init: { method?: string; headers: Record<string, string>; body?: unknown; raw?: Buffer; signal: AbortSignal },
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? (init.body !== undefined || init.raw ? 'POST' : 'GET'),
      headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      body: init.raw ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined),
      signal: init.signal,
    });
  } catch (e) {
    throw EngineError.network(provider, e);
  }
  const text = await res.text();
  if (!res.ok) throw EngineError.fromStatus(provider, res.status, text);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new EngineError(provider, 'upstream', `${provider} answered non-JSON`, true);
  }
}

/** Polls `check` until it returns a value (the vendor's job finished), every `intervalMs`, abortable. */
export async function pollVendor<T>(
  check: () => Promise<T | null>,
  opts: { intervalMs: number; signal: AbortSignal; onWait?: (n: number) => void },
): Promise<T> {
  for (let n = 0; ; n++) {
    const v = await check();
    if (v !== null) return v;
    opts.onWait?.(n);
    await sleep(opts.intervalMs, undefined, { signal: opts.signal });
  }
}

/** Downloads a vendor's output file (a URL the vendor returned, not a user URL). */
export async function downloadVendorFile(
  provider: string,
  url: string,
  path: string,
  signal: AbortSignal,
): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { signal });
  } catch (e) {
    throw EngineError.network(provider, e);
  }
  if (!res.ok || !res.body) throw EngineError.fromStatus(provider, res.status, 'output download failed');
  await pipeline(Readable.fromWeb(res.body as never), createWriteStream(path), { signal });
}
