import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ApiError } from '../../kernel/errors/api-error.ts';
import type { Clock } from './clock.ts';

/** Wrong guesses allowed per code; the fifth wrong guess burns the code. */
export const MAX_OTP_ATTEMPTS = 5;
const HOUR_MS = 3_600_000;

export interface OtpLimits {
  ttlSeconds: number;
  resendSeconds: number;
  sendsPerPhonePerHour: number;
  sendsPerIpPerHour: number;
}

// Counts the guess and returns the record in one step, so concurrent guesses cannot exceed the attempt limit.
const CHECK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local att = redis.call('HINCRBY', KEYS[1], 'att', 1)
return {redis.call('HGET', KEYS[1], 'h'), redis.call('HGET', KEYS[1], 'exp'), att}`;

// Issues a code: refuses within the resend cooldown of the last code (answering the ms left), else counts the send
// per IP and per phone (hourly windows; refused over either limit), else stores the code. KEYS: code, ip count,
// phone count. ARGV: now, cooldown ms, ip limit, phone limit, window ms, code hash, code expiry, record TTL ms.
const ISSUE_SCRIPT = `
local sent = tonumber(redis.call('HGET', KEYS[1], 'sent'))
local now = tonumber(ARGV[1])
if sent and now < sent + tonumber(ARGV[2]) then return {'cooldown', sent + tonumber(ARGV[2]) - now} end
local ip = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
if ip > tonumber(ARGV[3]) then return {'ip', ip} end
local ph = redis.call('INCR', KEYS[3])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
if ph > tonumber(ARGV[4]) then return {'phone', ph} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'h', ARGV[6], 'exp', ARGV[7], 'att', 0, 'sent', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[8])
return {'ok', 0}`;

/**
 * Sign-in codes in Redis, one pending code per phone. Only an HMAC of (phone, code) under the portal secret is
 * stored; the raw code exists only on its way to the sender. Redis keys carry an HMAC of the phone, not the
 * number. Expiry is checked against the portal clock (the Redis TTL only cleans up).
 */
export class OtpStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly secret: Buffer,
    private readonly limits: OtpLimits,
    private readonly clock: Clock,
  ) {}

  private mac(data: string): Buffer {
    return createHmac('sha256', this.secret).update(data).digest();
  }

  private codeKey(phone: string): string {
    return `${this.prefix}:portal:otp:${this.mac(`phone:${phone}`).toString('hex').slice(0, 32)}`;
  }

  /**
   * Makes and stores a new code for `phone`, after the resend cooldown and the per-IP and per-phone send limits.
   * Returns the raw code for the sender. The answer never depends on whether the phone belongs to a developer.
   */
  async issue(phone: string, clientIp: string): Promise<string> {
    const now = this.clock.now();
    const key = this.codeKey(phone);
    const window = Math.floor(now / HOUR_MS);
    const ipKey = `${this.prefix}:portal:sends:ip:${this.mac(`ip:${clientIp}`).toString('hex').slice(0, 32)}:${window}`;
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const exp = now + this.limits.ttlSeconds * 1000;
    // One Lua step: the cooldown check, both counts and the new code, so ten parallel requests cannot all pass
    // the cooldown before any of them has stored its code (issue #24: 10 parallel requests sent 5 codes).
    const [outcome, n] = (await this.redis.eval(
      ISSUE_SCRIPT,
      3,
      key,
      ipKey,
      `${key}:sends:${window}`,
      now,
      this.limits.resendSeconds * 1000,
      this.limits.sendsPerIpPerHour,
      this.limits.sendsPerPhonePerHour,
      HOUR_MS,
      this.mac(`code:${phone}:${code}`).toString('hex'),
      exp,
      this.limits.ttlSeconds * 1000 + 60_000,
    )) as [string, number];
    if (outcome === 'cooldown') {
      const retryAfter = Math.ceil(n / 1000);
      throw new ApiError('otp_resend_cooldown', { retryAfter }, 'phone', { 'retry-after': String(retryAfter) });
    }
    const retryAfter = String(Math.ceil(((window + 1) * HOUR_MS - now) / 1000));
    if (outcome === 'ip') {
      throw new ApiError('otp_send_limited', { scope: 'from this address', retryAfter }, null, {
        'retry-after': retryAfter,
      });
    }
    if (outcome === 'phone') {
      throw new ApiError('otp_send_limited', { scope: 'for this phone number', retryAfter }, 'phone', {
        'retry-after': retryAfter,
      });
    }
    return code;
  }

  /** Forgets the pending code of a phone (its delivery failed, so the cooldown must not block a retry). */
  async discard(phone: string): Promise<void> {
    await this.redis.del(this.codeKey(phone));
  }

  /** Checks a guess: resolves when it is the pending code (which is then used up), throws the reason otherwise. */
  async check(phone: string, code: string): Promise<void> {
    const key = this.codeKey(phone);
    const rec = (await this.redis.eval(CHECK_SCRIPT, 1, key)) as [string | null, string | null, number] | null;
    if (!rec || !rec[0] || !rec[1]) throw new ApiError('otp_expired', {}, 'code');
    const [stored, exp, attempts] = rec;
    if (Number(exp) <= this.clock.now()) {
      await this.redis.del(key);
      throw new ApiError('otp_expired', {}, 'code');
    }
    if (attempts > MAX_OTP_ATTEMPTS) {
      await this.redis.del(key);
      throw new ApiError('otp_attempts_exhausted', {}, 'code');
    }
    const expected = Buffer.from(stored, 'hex');
    const given = this.mac(`code:${phone}:${code}`);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      if (attempts >= MAX_OTP_ATTEMPTS) {
        await this.redis.del(key);
        throw new ApiError('otp_attempts_exhausted', {}, 'code');
      }
      throw new ApiError('invalid_otp', { remaining: MAX_OTP_ATTEMPTS - attempts }, 'code');
    }
    // Single use: of two concurrent right guesses only the one that deletes the record signs in.
    if ((await this.redis.del(key)) !== 1) throw new ApiError('otp_expired', {}, 'code');
  }
}
