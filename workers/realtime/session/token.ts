import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Short-lived session tokens: `v1.<base64url payload>.<base64url HMAC-SHA256>` keyed by REALTIME_SESSION_SECRET.
 * They carry who may open which session until when, so a telephony <Parameter> or a browser never holds the raw
 * API key. Verification is constant-time; an expired, tampered or foreign token is rejected.
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
  nonce?: string;
}

function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(`v1.${body}`).digest('base64url');
}

export function signSessionToken(secret: string, claims: Omit<SessionClaims, 'nonce'>): string {
  const body = Buffer.from(JSON.stringify({ ...claims, nonce: randomBytes(6).toString('base64url') })).toString(
    'base64url',
  );
  return `v1.${body}.${sign(secret, body)}`;
}

/** The claims, or null when the token is malformed, tampered, for another channel or expired. */
export function verifySessionToken(
  secret: string,
  token: unknown,
  channel: SessionClaims['ch'],
  nowMs = Date.now(),
): SessionClaims | null {
  if (typeof token !== 'string' || token.length > 4096) return null;
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== 'v1') return null;
  const [, body, mac] = parts as [string, string, string];
  const want = Buffer.from(sign(secret, body));
  const got = Buffer.from(mac);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
  let claims: SessionClaims;
  try {
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as SessionClaims;
  } catch {
    return null;
  }
  if (typeof claims !== 'object' || claims === null) return null;
  if (claims.ch !== channel || typeof claims.exp !== 'number' || claims.exp * 1000 <= nowMs) return null;
  if (typeof claims.sid !== 'string' || typeof claims.dev !== 'string' || typeof claims.agt !== 'string') return null;
  return claims;
}
