import type { Config } from '../../kernel/config/index.ts';
import {
  findDeveloperByPhone,
  getPhoneDeveloper,
  insertPhoneDeveloper,
  type PhoneDeveloperRow,
} from '../../kernel/db/developers.ts';
import type { Db } from '../../kernel/db/pool.ts';
import { ApiError } from '../../kernel/errors/api-error.ts';
import type { Logger } from '../../kernel/observability/logger.ts';
import type { Redis } from '../../kernel/redis.ts';
import { systemClock, type Clock } from './clock.ts';
import { createOtpSender, type OtpSender } from './otp-sender.ts';
import { OtpStore } from './otp-store.ts';
import { normalisePhone } from './phone.ts';
import { loadPortalSecret } from './secret.ts';
import { SessionStore, type PortalSession } from './sessions.ts';

export interface PortalDeveloper {
  id: string;
  name: string;
  tier: string;
  phone: string | null;
}

export const presentDeveloper = (d: PhoneDeveloperRow): PortalDeveloper => ({
  id: d.id,
  name: d.name,
  tier: d.tier,
  phone: d.phone,
});

/** A session just made, with the raw id for the cookie. */
export interface IssuedSession {
  id: string;
  session: PortalSession;
}

/**
 * Portal sign-in: phone one-time codes and the sessions they open. Independent of HTTP so the CLI and tests share
 * it with the routes.
 */
export class PortalAuth {
  constructor(
    private readonly db: Db,
    readonly otp: OtpStore,
    readonly sessions: SessionStore,
    readonly sender: OtpSender | null,
    readonly clock: Clock,
    private readonly config: Config,
    private readonly log: Logger,
  ) {}

  static async create(deps: { db: Db; redis: Redis; config: Config; log: Logger }): Promise<PortalAuth> {
    const { db, redis, config } = deps;
    const log = deps.log.child({ component: 'portal' });
    const clock = systemClock();
    const secret = await loadPortalSecret(db, config);
    const otp = new OtpStore(
      redis,
      config.REDIS_PREFIX,
      secret,
      {
        ttlSeconds: config.PORTAL_OTP_TTL_SECONDS,
        resendSeconds: config.PORTAL_OTP_RESEND_SECONDS,
        sendsPerPhonePerHour: config.PORTAL_OTP_SENDS_PER_PHONE_PER_HOUR,
        sendsPerIpPerHour: config.PORTAL_OTP_SENDS_PER_IP_PER_HOUR,
      },
      clock,
    );
    const sessions = new SessionStore(
      db,
      {
        idleMs: config.PORTAL_SESSION_IDLE_MINUTES * 60_000,
        absoluteMs: config.PORTAL_SESSION_ABSOLUTE_HOURS * 3_600_000,
      },
      clock,
    );
    return new PortalAuth(db, otp, sessions, createOtpSender(config, redis, log), clock, config, log);
  }

  /**
   * Sends a code. The answer is the same whether or not the phone belongs to a developer: nothing here looks the
   * phone up, so neither the response nor its timing can tell.
   */
  async requestCode(phoneInput: string, clientIp: string): Promise<{ sent: true; resendAfterSeconds: number }> {
    const phone = normalisePhone(phoneInput);
    const sender = this.sender;
    if (!sender) {
      throw new ApiError('feature_not_configured', {
        detail: 'Portal sign-in is not configured on this server (the operator has not set PORTAL_OTP_SENDER).',
      });
    }
    const code = await this.otp.issue(phone, clientIp);
    try {
      await sender.send(phone, code, this.config.PORTAL_OTP_TTL_SECONDS);
    } catch (e) {
      await this.otp.discard(phone);
      throw e;
    }
    return { sent: true, resendAfterSeconds: this.config.PORTAL_OTP_RESEND_SECONDS };
  }

  /**
   * Checks the code and opens a new session: signed in when the phone belongs to a developer, otherwise a
   * sign-up session that may only name the new account. `previousId` (the cookie the browser came with) is ended.
   */
  async verifyCode(
    phoneInput: string,
    code: string,
    previousId: string | undefined,
  ): Promise<IssuedSession & { developer: PortalDeveloper | null }> {
    const phone = normalisePhone(phoneInput);
    await this.otp.check(phone, code);
    const dev = await findDeveloperByPhone(this.db, phone);
    const issued = await this.rotate(previousId, phone, dev?.id ?? null);
    this.log.info({ developerId: dev?.id ?? null, signup: !dev }, 'portal sign-in');
    return { ...issued, developer: dev ? presentDeveloper(dev) : null };
  }

  /** Names a new account: creates the developer (starter tier) with the session's phone, in a new session. */
  async signup(
    session: PortalSession,
    sessionId: string,
    name: string,
  ): Promise<IssuedSession & { developer: PortalDeveloper }> {
    if (session.developerId) throw new ApiError('conflict', { detail: 'This session already has an account.' });
    const dev = await insertPhoneDeveloper(this.db, name, 'starter', session.phone);
    if (!dev) {
      throw new ApiError('conflict', {
        detail: 'This phone number already belongs to an account. Sign in again to use it.',
      });
    }
    const issued = await this.rotate(sessionId, session.phone, dev.id);
    this.log.info({ developerId: dev.id }, 'portal sign-up');
    return { ...issued, developer: presentDeveloper(dev) };
  }

  async developerOf(session: PortalSession): Promise<PortalDeveloper | null> {
    if (!session.developerId) return null;
    const dev = await getPhoneDeveloper(this.db, session.developerId);
    return dev ? presentDeveloper(dev) : null;
  }

  /** Ends the old session (if any) and opens a new one: a new id at every change of privilege. */
  private async rotate(previousId: string | undefined, phone: string, developerId: string | null) {
    if (previousId) await this.sessions.end(previousId);
    // Expired rows are swept now and then; reads check expiry themselves, so this is housekeeping only.
    if (Math.random() < 0.05) await this.sessions.sweep();
    return this.sessions.create(phone, developerId);
  }
}
