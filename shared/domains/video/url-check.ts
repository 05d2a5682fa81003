import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ApiError } from '../../kernel/errors/api-error.ts';
import type { AddressPolicy } from '../../kernel/net/address-policy.ts';
import { parseUserUrl } from '../../kernel/net/safe-fetch.ts';

/**
 * Submission-time check of a user URL, so a private-network address is a 400 `url_not_allowed` at once rather
 * than a failed job later. The fetch itself checks again at connect time (safeFetch), which is what actually
 * protects against DNS rebinding; this is for a clear, early answer.
 */
export async function precheckUrl(
  raw: string,
  policy: AddressPolicy,
  param: string,
  /**
   * A webhook URL is used later, not now: a host that does not resolve at creation (a DNS hiccup, a name not yet
   * published) is taken, and each delivery checks it again. A media URL is fetched now, so it must resolve.
   */
  opts: { allowUnresolved?: boolean } = {},
): Promise<void> {
  const url = parseUserUrl(raw, param);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (policy.hostAllowed(host)) return;
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      if (opts.allowUnresolved) return;
      throw new ApiError('url_fetch_failed', { detail: `the host of ${param} does not resolve` }, param);
    }
  }
  const bad = addresses.find((a) => !policy.addressAllowed(a));
  if (bad) throw new ApiError('url_not_allowed', { detail: `${param} → ${bad}` }, param);
}
