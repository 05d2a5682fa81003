import { isIP } from 'node:net';

/** Names proxy-addr (Fastify's trustProxy) understands for its pre-defined ranges. */
const NAMED = new Set(['loopback', 'linklocal', 'uniquelocal']);

function validEntry(entry: string): boolean {
  if (NAMED.has(entry)) return true;
  const [addr = '', bits, ...rest] = entry.split('/');
  const family = isIP(addr);
  if (!family || rest.length) return false;
  if (bits === undefined) return true;
  const n = /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
  return n >= 0 && n <= (family === 4 ? 32 : 128);
}

const entries = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** TRUST_PROXY is empty, a hop count, or a list of IPs / CIDRs / named ranges. */
export function validTrustProxy(value: string): boolean {
  if (/^\s*\d{1,2}\s*$/.test(value)) return true;
  return entries(value).every(validEntry);
}

/**
 * Fastify's `trustProxy` from TRUST_PROXY. Empty is `false`: X-Forwarded-For is ignored and `req.ip` is the
 * socket's peer, so a client cannot pick the address that per-IP limits count (issue #24: 25 made-up addresses got
 * 25 codes). A hop count trusts that many proxies nearest to us; a list trusts only peers it names.
 */
export function trustProxyOption(value: string): boolean | string[] | ((addr: string, hop: number) => boolean) {
  const v = value.trim();
  if (v === '') return false;
  if (/^\d{1,2}$/.test(v)) {
    // proxy-addr's hop-count rule (what Fastify does with a number): the n peers nearest to us are proxies.
    const hops = Number(v);
    return hops === 0 ? false : (_addr, hop) => hop < hops;
  }
  return entries(v);
}
