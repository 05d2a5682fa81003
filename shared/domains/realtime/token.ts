import { randomBytes } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';

/**
 * Short-lived session tokens: a standard JWT (HS256, keyed by REALTIME_SESSION_SECRET) naming who may open which
 * session until when, so a telephony <Parameter> or a browser never holds the raw API key. The audience is the
 * channel (`realtime:twilio` / `realtime:direct`), so a token minted for one socket cannot open the other; the
 * issuer, algorithm and expiry are checked on every verify.
 */
export interface SessionClaims {
  /** Session id (ses_…). */
  sid: string;
  /** Developer id. */
  dev: string;
  /** Agent id. */
  agt: string;
  /** Channel the token is for. */
  ch: 'twilio' | 'direct';
  /** Expiry, Unix seconds. */
  exp: number;
  /** Optional call context. */
  from?: string;
  to?: string;
  ins?: string;
  /** Outbound task id when the call was placed by the dispatcher. */
  tsk?: string;
  /** Agent configuration version to run (absent: the agent as it is when the call connects). */
  ver?: number;
  /** The call's template variables (the session-create body's `variables`). */
  var?: Record<string, string | number | boolean>;
}

export const SESSION_TOKEN_ISSUER = 'vap';
export const sessionAudience = (ch: SessionClaims['ch']) => `realtime:${ch}`;

const keys = new Map<string, Uint8Array>();
function keyOf(secret: string): Uint8Array {
  let k = keys.get(secret);
  if (!k) keys.set(secret, (k = new TextEncoder().encode(secret)));
  return k;
}

export async function signSessionToken(secret: string, claims: SessionClaims): Promise<string> {
  const { exp, ch, ...rest } = claims;
  return new SignJWT({ ...rest, ch })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(SESSION_TOKEN_ISSUER)
    .setAudience(sessionAudience(ch))
    .setIssuedAt()
    .setExpirationTime(exp)
    .setJti(randomBytes(9).toString('base64url'))
    .sign(keyOf(secret));
}

/** The claims, or null when the token is malformed, tampered, for another channel, foreign or expired. */
export async function verifySessionToken(
  secret: string,
  token: unknown,
  channel: SessionClaims['ch'],
  nowMs = Date.now(),
): Promise<SessionClaims | null> {
  if (typeof token !== 'string' || token.length > 4096) return null;
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), {
      algorithms: ['HS256'],
      issuer: SESSION_TOKEN_ISSUER,
      audience: sessionAudience(channel),
      currentDate: new Date(nowMs),
      requiredClaims: ['exp', 'sid', 'dev', 'agt'],
    });
    const c = payload as Partial<SessionClaims>;
    if (c.ch !== channel || typeof c.sid !== 'string' || typeof c.dev !== 'string' || typeof c.agt !== 'string') {
      return null;
    }
    return c as SessionClaims;
  } catch (e) {
    // Every JOSE failure (bad signature, expired, wrong audience, garbage) is "not a valid token"; anything else is
    // a bug that must surface.
    if (e instanceof errors.JOSEError) return null;
    throw e;
  }
}
