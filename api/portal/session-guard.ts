import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../shared/kernel/config/index.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import type { PortalSession } from '../../shared/domains/portal/sessions.ts';

export const SESSION_COOKIE = 'vap_portal';
const COOKIE_PATH = '/portal';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function readSessionCookie(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** Secure when the platform is served over HTTPS: its public URL, or the proxy in front says so. */
function isHttps(req: FastifyRequest, config: Config): boolean {
  return config.PUBLIC_BASE_URL.startsWith('https:') || req.protocol === 'https';
}

export function setSessionCookie(
  req: FastifyRequest,
  reply: FastifyReply,
  config: Config,
  id: string,
  absoluteExpiresAt: Date,
): void {
  const maxAge = Math.max(0, Math.floor((absoluteExpiresAt.getTime() - Date.now()) / 1000));
  const attrs = [`${SESSION_COOKIE}=${id}`, `Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAge}`];
  if (isHttps(req, config)) attrs.push('Secure');
  reply.header('set-cookie', attrs.join('; '));
}

export function clearSessionCookie(req: FastifyRequest, reply: FastifyReply, config: Config): void {
  const attrs = [`${SESSION_COOKIE}=`, `Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Lax', 'Max-Age=0'];
  if (isHttps(req, config)) attrs.push('Secure');
  reply.header('set-cookie', attrs.join('; '));
}

export const isStateChanging = (req: FastifyRequest) => !SAFE_METHODS.has(req.method);

/**
 * The origin check of every state-changing portal request, sign-in included (against login CSRF): the browser's
 * Origin must be this site (PUBLIC_BASE_URL, or the host the request came to); a browser that sends no Origin must
 * say Sec-Fetch-Site: same-origin. Anything else (another site, or a client that sends neither) is refused.
 */
export function checkOrigin(req: FastifyRequest, config: Config): void {
  const origin = req.headers.origin;
  if (origin) {
    const allowed = [new URL(config.PUBLIC_BASE_URL).origin, `${req.protocol}://${req.host}`];
    if (!allowed.includes(origin)) throw new ApiError('csrf_failed', { detail: `Origin ${origin} is not this site.` });
    return;
  }
  if (req.headers['sec-fetch-site'] !== 'same-origin') {
    throw new ApiError('csrf_failed', { detail: 'the request carries no Origin header.' });
  }
}

/** The session-bound token: `x-csrf-token` must equal the session's token (constant-time comparison). */
export function checkCsrfToken(req: FastifyRequest, session: PortalSession): void {
  const sent = req.headers['x-csrf-token'];
  if (typeof sent !== 'string' || sent === '') {
    throw new ApiError('csrf_failed', { detail: 'the x-csrf-token header is missing.' }, 'x-csrf-token');
  }
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrfToken);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new ApiError(
      'csrf_failed',
      { detail: 'the x-csrf-token header does not match the session.' },
      'x-csrf-token',
    );
  }
}

/** Both checks, for state-changing requests made within a session. */
export function checkCsrf(req: FastifyRequest, config: Config, session: PortalSession): void {
  checkOrigin(req, config);
  checkCsrfToken(req, session);
}
