import { afterEach, describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, signWebhook, verifyWebhook, webhookHeaders } from './standard-webhooks.ts';

const SPEC_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('standard webhooks', () => {
  afterEach(() => vi.useRealTimers());

  it('matches the specification test vector', () => {
    const sig = signWebhook(SPEC_SECRET, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(sig).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs headers that the reference library verifies with a fresh secret', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const body = JSON.stringify({ type: 'video.completed', data: { id: 'vid_1' } });
    const headers = webhookHeaders(secret, 'msg_1', body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow(/signature/i);
  });

  it('rejects tampered bodies and stale timestamps', () => {
    vi.useFakeTimers({ now: 1614265330_000 });
    const h = { id: 'msg_1', timestamp: '1614265330', signature: signWebhook(SPEC_SECRET, 'msg_1', 1614265330, '{}') };
    expect(verifyWebhook(SPEC_SECRET, h, '{}')).toBe(true);
    expect(verifyWebhook(SPEC_SECRET, h, '{"a":1}')).toBe(false);
    expect(verifyWebhook(SPEC_SECRET, { ...h, timestamp: 'soon' }, '{}')).toBe(false);
    vi.setSystemTime(1614265330_000 + 301_000);
    expect(verifyWebhook(SPEC_SECRET, h, '{}')).toBe(false);
  });

  it('accepts any of several space-separated signatures (secret rotation) and non-JSON bodies', () => {
    vi.useFakeTimers({ now: 1614265330_000 });
    const old = newWebhookSecret();
    const signature = `${signWebhook(old, 'msg_2', 1614265330, 'plain text')} ${signWebhook(SPEC_SECRET, 'msg_2', 1614265330, 'plain text')}`;
    expect(verifyWebhook(SPEC_SECRET, { id: 'msg_2', timestamp: '1614265330', signature }, 'plain text')).toBe(true);
  });
});
