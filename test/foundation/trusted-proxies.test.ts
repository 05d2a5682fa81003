import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { devOtp } from '../../support/helpers/portal.ts';

/**
 * Issue #24 finding 4: X-Forwarded-For was believed from anyone (`trustProxy: true`), so the per-IP limit on
 * sign-in code sends did not hold (25 made-up addresses → 25 × 202), and 10 parallel code requests for one phone
 * sent 5 codes despite the resend cooldown.
 */
let seq = 0;
const phone = () => `+1303555${String(1000 + seq++).padStart(4, '0')}`;

function requestCode(p: TestPlatform, ph: string, forwardedFor?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', origin: p.url };
  if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
  return fetch(`${p.url}/portal/api/auth/otp`, { method: 'POST', headers, body: JSON.stringify({ phone: ph }) });
}

const madeUp = (i: number) => `203.0.113.${i + 1}`;

describe('default: no proxy is trusted', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ roles: ['api'], env: { TRUST_PROXY: '' } });
  });
  afterAll(() => p?.close());

  it('made-up X-Forwarded-For addresses do not escape the per-IP send limit', async () => {
    const limit = p.config.PORTAL_OTP_SENDS_PER_IP_PER_HOUR;
    const statuses: number[] = [];
    for (let i = 0; i < limit + 5; i++) statuses.push((await requestCode(p, phone(), madeUp(i))).status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(limit);
    expect(statuses.slice(limit)).toEqual(Array(5).fill(429));
  });
});

describe('TRUST_PROXY names the proxy in front', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ roles: ['api'], env: { TRUST_PROXY: '127.0.0.1/8' } });
  });
  afterAll(() => p?.close());

  it('the per-IP limit counts the client address the trusted proxy forwards', async () => {
    const limit = p.config.PORTAL_OTP_SENDS_PER_IP_PER_HOUR;
    // Different clients behind the proxy each have their own allowance…
    for (let i = 0; i < limit + 5; i++) expect((await requestCode(p, phone(), madeUp(i))).status).toBe(202);
    // …and one client is held to it, whichever address it claims further left in the chain.
    const statuses: number[] = [];
    for (let i = 0; i < limit + 2; i++) {
      statuses.push((await requestCode(p, phone(), `10.9.9.${i}, 198.51.100.7`)).status);
    }
    expect(statuses.filter((s) => s === 202)).toHaveLength(limit);
    expect(statuses.slice(limit)).toEqual([429, 429]);
  });

  it('10 parallel code requests for one phone send one code', async () => {
    const ph = phone();
    const answers = await Promise.all(Array.from({ length: 10 }, () => requestCode(p, ph, '192.0.2.10')));
    const bodies = await Promise.all(answers.map(async (r) => ({ status: r.status, body: await r.text() })));
    expect(bodies.filter((b) => b.status === 202)).toHaveLength(1);
    for (const b of bodies.filter((x) => x.status !== 202)) {
      expect(b.status).toBe(429);
      expect(b.body).toContain('otp_resend_cooldown');
    }
    expect(await devOtp(p, ph)).toMatch(/^\d{6}$/);
  });
});
