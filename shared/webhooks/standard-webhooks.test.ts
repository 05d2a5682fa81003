import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook } from './standard-webhooks.ts';

describe('standard webhooks', () => {
  it('matches the specification test vector', () => {
    const sig = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(sig).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
  it('rejects tampered bodies and stale timestamps', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const now = 1614265330_000;
    const h = { id: 'msg_1', timestamp: '1614265330', signature: signWebhook(secret, 'msg_1', 1614265330, '{}') };
    expect(verifyWebhook(secret, h, '{}', now)).toBe(true);
    expect(verifyWebhook(secret, h, '{"a":1}', now)).toBe(false);
    expect(verifyWebhook(secret, h, '{}', now + 301_000)).toBe(false);
  });
});
