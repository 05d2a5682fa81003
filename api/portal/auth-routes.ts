import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  LoginOptions,
  OtpBody,
  OtpSent,
  SessionInfo,
  SignupBody,
  SignupResult,
  VerifyBody,
  VerifyResult,
} from '../../shared/contracts/portal.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import type { PortalSession } from '../../shared/domains/portal/sessions.ts';
import { checkCsrf, checkOrigin, clearSessionCookie, readSessionCookie, setSessionCookie } from './session-guard.ts';

/**
 * /portal/api/auth/*: sign-in by phone one-time code, sign-up, the session, sign-out. Sign-in and verify run before
 * any session exists, so they get the Origin check only; the rest need the session and its CSRF token as well.
 */
export const portalAuthRoutes: FastifyPluginAsyncZod = async (app) => {
  const { config } = app.infra;
  const auth = app.portal;
  const schema = { hide: true, tags: ['Portal'] };

  async function currentSession(cookie: string | undefined): Promise<PortalSession> {
    const session = await auth.sessions.get(cookie);
    if (!session) throw new ApiError('portal_session_required');
    return session;
  }

  // Public (the login page asks before anyone is signed in); it says only which kind of sender is configured.
  app.get('/options', { schema: { ...schema, response: { 200: LoginOptions } } }, async () => ({
    codeDelivery:
      auth.sender?.kind === 'dev-log'
        ? ('development_sink' as const)
        : auth.sender
          ? ('sms' as const)
          : ('not_configured' as const),
  }));

  app.post('/otp', { schema: { ...schema, body: OtpBody, response: { 202: OtpSent } } }, async (req, reply) => {
    checkOrigin(req, config);
    return reply.code(202).send(await auth.requestCode(req.body.phone, req.ip));
  });

  app.post(
    '/verify',
    { schema: { ...schema, body: VerifyBody, response: { 200: VerifyResult } } },
    async (req, reply) => {
      checkOrigin(req, config);
      const r = await auth.verifyCode(req.body.phone, req.body.code, readSessionCookie(req));
      setSessionCookie(req, reply, config, r.id, r.session.absoluteExpiresAt);
      return {
        status: r.developer ? ('signed_in' as const) : ('needs_name' as const),
        developer: r.developer,
        csrfToken: r.session.csrfToken,
      };
    },
  );

  app.post(
    '/signup',
    { schema: { ...schema, body: SignupBody, response: { 201: SignupResult } } },
    async (req, reply) => {
      const cookie = readSessionCookie(req);
      const session = await currentSession(cookie);
      checkCsrf(req, config, session);
      const r = await auth.signup(session, cookie!, req.body.name);
      setSessionCookie(req, reply, config, r.id, r.session.absoluteExpiresAt);
      return reply.code(201).send({ developer: r.developer, csrfToken: r.session.csrfToken });
    },
  );

  app.get('/session', { schema: { ...schema, response: { 200: SessionInfo } } }, async (req) => {
    const session = await currentSession(readSessionCookie(req));
    const developer = await auth.developerOf(session);
    return {
      status: developer ? ('signed_in' as const) : ('needs_name' as const),
      developer,
      phone: session.phone,
      csrfToken: session.csrfToken,
      idleExpiresAt: session.idleExpiresAt.toISOString(),
      absoluteExpiresAt: session.absoluteExpiresAt.toISOString(),
    };
  });

  app.post('/logout', { schema }, async (req, reply) => {
    const cookie = readSessionCookie(req);
    const session = await auth.sessions.get(cookie);
    // Without a live session there is nothing to end (and nothing a forged request could harm).
    if (session) {
      checkCsrf(req, config, session);
      await auth.sessions.end(cookie!);
    }
    clearSessionCookie(req, reply, config);
    return reply.code(204).send();
  });

  app.post('/logout-all', { schema }, async (req, reply) => {
    const cookie = readSessionCookie(req);
    const session = await currentSession(cookie);
    checkCsrf(req, config, session);
    if (session.developerId) await auth.sessions.endAllOf(session.developerId);
    else await auth.sessions.end(cookie!);
    clearSessionCookie(req, reply, config);
    return reply.code(204).send();
  });
};
