import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/kernel/config/index.ts';
import { startTwilioRestDouble, type TwilioRestDouble } from '../../support/doubles/twilio-rest.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { devOtp, PortalBrowser } from '../../support/helpers/portal.ts';

const SID = 'ACportal00000000000000000000000000';
const TOKEN = 'portal-twilio-token';
const FROM = '+14155550199';
/** Twilio answers 400 (21211 invalid 'To') for this destination, as it does for numbers it cannot reach. */
const UNREACHABLE = '+14155550198';

let p: TestPlatform;
let twilio: TwilioRestDouble;
const logLines: string[] = [];

beforeAll(async () => {
  twilio = await startTwilioRestDouble({ accountSid: SID, authToken: TOKEN, unreachable: [UNREACHABLE] });
  p = await startTestPlatform({
    roles: ['api'],
    logLines,
    env: {
      PORTAL_OTP_SENDER: 'twilio-messaging',
      PORTAL_TWILIO_FROM: FROM,
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TOKEN,
      TWILIO_API_BASE_URL: twilio.url,
    },
  });
}, 120_000);

afterAll(async () => {
  await p?.close();
  await twilio?.close();
});

describe('Twilio Messaging sender', () => {
  it('sends the code by SMS through the Messages API; the code verifies; it is never logged', async () => {
    const ph = '+14155550142';
    const b = new PortalBrowser(p);
    const res = await b.fetch('/portal/api/auth/otp', { method: 'POST', json: { phone: '+1 (415) 555-0142' } });
    expect(res.status).toBe(202);
    const sms = await waitUntil(() => twilio.messages.find((m) => m.get('To') === ph));
    expect(sms.get('From')).toBe(FROM);
    const code = /\b(\d{6})\b/.exec(sms.get('Body') ?? '')![1]!;
    expect(await devOtp(p, ph)).toBeNull(); // the development sink is not in use
    const verify = await b.verify(ph, code);
    expect(verify.status).toBe(200);
    expect(logLines.join('\n')).toContain('portal sign-in code sent by SMS');
    // As a token of its own: a timestamp may contain the same six digits by chance.
    expect(logLines.join('\n')).not.toMatch(new RegExp(`(?<!\\d)${code}(?!\\d)`));
  });

  it("maps Twilio's invalid-number answer to invalid_phone_number, and a resend is not blocked by it", async () => {
    const b = new PortalBrowser(p);
    for (let i = 0; i < 2; i++) {
      const res = await b.fetch('/portal/api/auth/otp', { method: 'POST', json: { phone: UNREACHABLE } });
      expect(res.status).toBe(400);
      const err = ((await res.json()) as { error: { code: string; param: string } }).error;
      expect(err).toMatchObject({ code: 'invalid_phone_number', param: 'phone' });
    }
  });

  it('answers a Twilio outage with 502 upstream_error after one request (no second SMS); a retry then sends', async () => {
    const ph = '+14155550143';
    const b = new PortalBrowser(p);
    const sent = twilio.messages.length;
    twilio.requests.length = 0;
    twilio.failNext(503);
    const res = await b.fetch('/portal/api/auth/otp', { method: 'POST', json: { phone: ph } });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_error');
    expect(twilio.requests).toHaveLength(1);
    // The failed code was discarded: the resend cooldown does not block the person's retry.
    const retry = await b.fetch('/portal/api/auth/otp', { method: 'POST', json: { phone: ph } });
    expect(retry.status).toBe(202);
    expect(twilio.messages.length - sent).toBe(1);
  });
});

describe('portal configuration', () => {
  const base = { NODE_ENV: 'development' };
  const error = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error('loadConfig accepted the configuration');
  };

  it('names the missing variable of a half-configured Twilio sender', () => {
    const msg = error({
      ...base,
      PORTAL_OTP_SENDER: 'twilio-messaging',
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TOKEN,
    });
    expect(msg).toContain('PORTAL_TWILIO_FROM');
    expect(msg).not.toContain('TWILIO_ACCOUNT_SID:');
    expect(error({ ...base, PORTAL_OTP_SENDER: 'twilio-messaging', PORTAL_TWILIO_FROM: FROM })).toMatch(
      /TWILIO_ACCOUNT_SID[\s\S]*TWILIO_AUTH_TOKEN/,
    );
    expect(error({ ...base, PORTAL_TWILIO_FROM: '4155550100' })).toContain('PORTAL_TWILIO_FROM');
  });

  it('refuses the development sink in production unless the operator opts in by name', () => {
    expect(error({ NODE_ENV: 'production', PORTAL_OTP_SENDER: 'dev-log' })).toContain(
      'PORTAL_ALLOW_DEV_OTP_IN_PRODUCTION=dev-log',
    );
    expect(
      error({ NODE_ENV: 'production', PORTAL_OTP_SENDER: 'dev-log', PORTAL_ALLOW_DEV_OTP_IN_PRODUCTION: 'yes' }),
    ).toContain('PORTAL_ALLOW_DEV_OTP_IN_PRODUCTION');
    const optedIn = loadConfig({
      NODE_ENV: 'production',
      PORTAL_OTP_SENDER: 'dev-log',
      PORTAL_ALLOW_DEV_OTP_IN_PRODUCTION: 'dev-log',
    });
    expect(optedIn.portalOtpSender).toBe('dev-log');
    // Unset in production: no sender (sign-in answers 503), never the sink by default.
    expect(loadConfig({ NODE_ENV: 'production' }).portalOtpSender).toBeNull();
    expect(loadConfig(base).portalOtpSender).toBe('dev-log');
  });
});
