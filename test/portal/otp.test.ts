import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { devOtp, PortalBrowser } from '../../support/helpers/portal.ts';

const HOUR = 3_600_000;
let p: TestPlatform;
let seq = 0;
const phone = () => `+1202555${String(100 + seq++).padStart(4, '0')}`;
let realNow: () => number;
/** Portal time, moved by the tests: 1 min into an hour window, so limits never straddle a window by chance. */
let t = 0;

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  realNow = p.app.portal.clock.now;
}, 120_000);

afterEach(() => {
  p.app.portal.clock.now = realNow;
});

afterAll(async () => {
  await p?.close();
});

function freezeClock(): void {
  t = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 60_000;
  p.app.portal.clock.now = () => t;
}

async function send(b: PortalBrowser, ph: string): Promise<Response> {
  return b.fetch('/portal/api/auth/otp', { method: 'POST', json: { phone: ph } });
}

async function errorOf(res: Response): Promise<{ code: string; param: string | null }> {
  return ((await res.json()) as { error: { code: string; param: string | null } }).error;
}

describe('sign-in codes', () => {
  it('stores only a keyed hash: neither the code nor the phone appears in Redis keys or values', async () => {
    const ph = phone();
    const b = new PortalBrowser(p);
    const code = await b.requestCode(ph);
    const redis = p.infra.redis;
    const keys = (await redis.keys(`${p.config.REDIS_PREFIX}:portal:otp:*`)).filter((k) => !k.includes(':sends:'));
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      expect(k).not.toContain(ph.slice(1));
      expect(JSON.stringify(await redis.hgetall(k))).not.toContain(code);
    }
  });

  it('expires after the TTL', async () => {
    freezeClock();
    const ph = phone();
    const b = new PortalBrowser(p);
    const code = await b.requestCode(ph);
    t += p.config.PORTAL_OTP_TTL_SECONDS * 1000;
    const res = await b.verify(ph, code);
    expect(res.status).toBe(401);
    expect(await errorOf(res)).toMatchObject({ code: 'otp_expired', param: 'code' });
  });

  it('is accepted just before the TTL, and only once', async () => {
    freezeClock();
    const ph = phone();
    const b = new PortalBrowser(p);
    const code = await b.requestCode(ph);
    t += p.config.PORTAL_OTP_TTL_SECONDS * 1000 - 1000;
    expect((await b.verify(ph, code)).status).toBe(200);
    const again = await new PortalBrowser(p).verify(ph, code);
    expect((await errorOf(again)).code).toBe('otp_expired');
  });

  it('allows 5 attempts per code: the fifth wrong guess burns it, even for the right code after', async () => {
    const ph = phone();
    const b = new PortalBrowser(p);
    const code = await b.requestCode(ph);
    const wrong = code === '000000' ? '111111' : '000000';
    const answers = [];
    for (let i = 0; i < 5; i++) {
      const res = await b.verify(ph, wrong);
      answers.push([res.status, (await errorOf(res)).code]);
    }
    expect(answers).toEqual([
      [401, 'invalid_otp'],
      [401, 'invalid_otp'],
      [401, 'invalid_otp'],
      [401, 'invalid_otp'],
      [429, 'otp_attempts_exhausted'],
    ]);
    const late = await b.verify(ph, code);
    expect(late.status).toBe(401);
    expect((await errorOf(late)).code).toBe('otp_expired');
  });

  it('counts concurrent guesses: at most 5 are compared', async () => {
    const ph = phone();
    const b = new PortalBrowser(p);
    const code = await b.requestCode(ph);
    const guesses = Array.from({ length: 12 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'));
    const res = await Promise.all(guesses.map((g) => new PortalBrowser(p).verify(ph, g)));
    const codes = await Promise.all(res.map(async (r) => (await errorOf(r)).code));
    expect(codes.filter((c) => c === 'invalid_otp').length).toBe(4);
    expect(codes.filter((c) => c === 'otp_attempts_exhausted').length).toBeGreaterThanOrEqual(1);
  });

  it('refuses a resend within the cooldown, with Retry-After, then allows it; the old code stops working', async () => {
    freezeClock();
    const ph = phone();
    const b = new PortalBrowser(p);
    const first = await b.requestCode(ph);
    const early = await send(b, ph);
    expect(early.status).toBe(429);
    expect(early.headers.get('retry-after')).toBe(String(p.config.PORTAL_OTP_RESEND_SECONDS));
    expect((await errorOf(early)).code).toBe('otp_resend_cooldown');
    t += p.config.PORTAL_OTP_RESEND_SECONDS * 1000;
    const second = await b.requestCode(ph);
    if (second !== first) expect((await b.verify(ph, first)).status).toBe(401);
    expect((await b.verify(ph, second)).status).toBe(200);
  });

  it('limits sends per phone per hour, across client addresses', async () => {
    freezeClock();
    const ph = phone();
    const limit = p.config.PORTAL_OTP_SENDS_PER_PHONE_PER_HOUR;
    for (let i = 0; i < limit; i++) {
      expect((await send(new PortalBrowser(p), ph)).status).toBe(202);
      t += p.config.PORTAL_OTP_RESEND_SECONDS * 1000;
    }
    const over = await send(new PortalBrowser(p), ph);
    expect(over.status).toBe(429);
    expect(await errorOf(over)).toMatchObject({ code: 'otp_send_limited', param: 'phone' });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    t += HOUR; // the next window
    expect((await send(new PortalBrowser(p), ph)).status).toBe(202);
  });

  it('limits sends per client IP per hour, across phones', async () => {
    freezeClock();
    const b = new PortalBrowser(p);
    for (let i = 0; i < p.config.PORTAL_OTP_SENDS_PER_IP_PER_HOUR; i++)
      expect((await send(b, phone())).status).toBe(202);
    const over = await send(b, phone());
    expect(over.status).toBe(429);
    expect(await errorOf(over)).toMatchObject({ code: 'otp_send_limited', param: null });
    // Another address is not affected.
    expect((await send(new PortalBrowser(p), phone())).status).toBe(202);
  });

  it('rejects a malformed code before counting it', async () => {
    const ph = phone();
    const b = new PortalBrowser(p);
    const code = await b.requestCode(ph);
    for (const bad of ['12345', 'abcdef', '1234567']) {
      const res = await b.verify(ph, bad);
      expect(res.status).toBe(400);
      expect((await errorOf(res)).param).toBe('code');
    }
    // Spaces and dashes as people type them are fine.
    expect((await b.verify(ph, `${code.slice(0, 3)} ${code.slice(3)}`)).status).toBe(200);
    expect(await devOtp(p, ph)).toBe(code);
  });
});
