import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ApiError } from '../errors/api-error.ts';
import type { AddressPolicy } from '../net/address-policy.ts';

/**
 * Submission-time check of a user URL, so a private-network address is a 400 `url_not_allowed` at once rather
 * than a failed job later. The fetch itself checks again at connect time (safeFetch), which is what actually
 * protects against DNS rebinding; this is for a clear, early answer.
 */
export async function precheckUrl(raw: string, policy: AddressPolicy, param: string): Promise<void> {
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
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (policy.hostAllowed(host)) return;
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      throw new ApiError('url_fetch_failed', { detail: `the host of ${param} does not resolve` }, param);
    }
  }
  const bad = addresses.find((a) => !policy.addressAllowed(a));
  if (bad) throw new ApiError('url_not_allowed', { detail: `${param} → ${bad}` }, param);
}
