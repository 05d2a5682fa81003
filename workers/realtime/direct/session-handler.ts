import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { z } from 'zod';
import { isApiError } from '../../../shared/kernel/errors/api-error.ts';
import { newId } from '../../../shared/kernel/ids.ts';
import { admitRealtimeSession, CLOSE } from '../../../shared/domains/realtime/session-claim.ts';
import { sessionSecret } from '../../../shared/domains/realtime/secret.ts';
import { markSessionFailedToStart, SessionAlreadyStartedError } from '../../../shared/domains/realtime/sessions.ts';
import { verifySessionToken } from '../../../shared/domains/realtime/token.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import { IdleWatch } from '../idle-watch.ts';
import { openSession } from '../call/bootstrap.ts';
import type { CallSession } from '../call/call-session.ts';
import type { SessionTransport } from '../call/types.ts';
import { trackSession } from '../call/live.ts';

export const DIRECT_IN_RATE = 16000;
export const DIRECT_OUT_RATES = [16000, 24000] as const;

/** Client → server control messages (JSON text frames). Audio is binary PCM16LE mono at 16 kHz. */
const ClientMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('mark'), name: z.string().max(100) }),
  z.object({ type: z.literal('dtmf'), digit: z.string().regex(/^[0-9*#A-D]$/) }),
  z.object({ type: z.literal('stop') }),
]);

/**
 * WS /v1/agents/:id/session — the direct protocol (docs/realtime.md): auth by `Authorization: Bearer <API key>` or
 * `?token=<session token>` from POST /v1/sessions/direct; `?outputRate=16000|24000`. Binary frames carry audio both
 * ways; JSON frames carry control and events. Bad input closes the socket with an `error` event first.
 */
export async function handleDirectSession(
  infra: Infra,
  socket: WebSocket,
  req: FastifyRequest<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>,
): Promise<void> {
  const log = infra.log.child({ component: 'direct-session' });
  let closed = false;
  let session: CallSession | null = null;
  const early: Array<{ data: Buffer; isBinary: boolean }> = [];

  const sendJson = (msg: Record<string, unknown>) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(msg));
  };
  const close = (code: number, errCode: string | null, message?: string) => {
    if (closed) return;
    if (errCode) sendJson({ type: 'error', code: errCode, message: message ?? errCode });
    closed = true;
    try {
      socket.close(code, (errCode ?? 'bye').slice(0, 120));
    } catch {
      socket.terminate();
    }
  };

  const handle = (data: Buffer, isBinary: boolean) => {
    if (!session) return;
    if (isBinary) {
      if (data.length % 2 !== 0 || data.length > 64_000)
        return close(1007, 'invalid_audio', 'PCM16 frames must have an even length ≤ 64000 bytes');
      session.onAudio(data);
      return;
    }
    let msg: z.infer<typeof ClientMessage>;
    try {
      const parsed = ClientMessage.safeParse(JSON.parse(data.toString('utf8')));
      if (!parsed.success) return close(1007, 'invalid_message', 'unknown or malformed control message');
      msg = parsed.data;
    } catch {
      return close(1007, 'malformed_json', 'control messages must be JSON');
    }
    if (msg.type === 'mark') session.onMark(msg.name);
    else if (msg.type === 'dtmf') session.onDtmf(msg.digit);
    else void session.stop('caller-hangup').finally(() => close(1000, null));
  };

  // A client that sends nothing (not even silence) for the idle limit is gone or holding a slot: close it.
  const idle = new IdleWatch(infra.config.REALTIME_IDLE_TIMEOUT_SECONDS * 1000, () =>
    close(CLOSE.timeout, 'idle_timeout', 'Nothing was received for too long.'),
  );
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (closed) return;
    idle.touch();
    if (session) handle(data, isBinary);
    else if (early.length < 200) early.push({ data, isBinary });
  });
  socket.on('close', () => {
    closed = true;
    idle.stop();
    void session?.stop('socket-closed');
  });
  socket.on('error', (e) => log.warn({ err: e.message }, 'direct socket error'));

  const agentId = req.params.id;
  const outRate = Number(req.query.outputRate ?? DIRECT_IN_RATE);
  if (!DIRECT_OUT_RATES.includes(outRate as 16000))
    return close(1008, 'invalid_output_rate', 'outputRate must be 16000 or 24000');

  // Auth: a session token (browsers) or an API key (custom clients).
  let developerId: string;
  let sessionId: string;
  let instanceId: string | undefined;
  let agentVersion: number | undefined;
  let variables: Record<string, string | number | boolean> | null = null;
  let tier: string | undefined;
  const token = req.query.token;
  try {
    if (token) {
      const claims = await verifySessionToken(sessionSecret(infra), token, 'direct');
      if (!claims || claims.agt !== agentId)
        return close(1008, 'invalid_session_token', 'The session token is invalid or expired.');
      developerId = claims.dev;
      sessionId = claims.sid;
      instanceId = claims.ins;
      agentVersion = claims.ver;
      variables = claims.var ?? null;
    } else {
      const auth = await infra.authenticator.authenticate(req.headers.authorization);
      developerId = auth.developerId;
      tier = auth.tier;
      sessionId = newId('session');
      instanceId = req.query.instanceId;
    }
  } catch (e) {
    return close(1008, isApiError(e) ? e.code : 'unauthorized', isApiError(e) ? e.message : 'unauthorized');
  }
  // A token opens its own session once (claimed atomically in Postgres); every session counts against the
  // developer's cap on running sessions.
  const admitted = await admitRealtimeSession(infra, {
    sessionId,
    developerId,
    agentId,
    channel: 'direct',
    claim: Boolean(token),
    tier,
  });
  if (admitted === 'used') return refuseUsedToken();
  if (admitted === 'limit') {
    return close(CLOSE.sessionLimit, 'concurrent_sessions_limited', 'Too many realtime sessions are running.');
  }

  const transport: SessionTransport = {
    channel: 'direct',
    inRate: DIRECT_IN_RATE,
    outRate,
    sendAudio: (pcm) => {
      if (socket.readyState === socket.OPEN) socket.send(pcm, { binary: true });
    },
    sendMark: (name) => sendJson({ type: 'mark', name }),
    sendClear: () => sendJson({ type: 'clear' }),
    event: (msg) => sendJson(msg),
  };
  try {
    const opened = await openSession(infra, {
      sessionId,
      developerId,
      agentId,
      instanceId,
      ...(agentVersion ? { agentVersion } : {}),
      variables,
      channel: 'direct',
      transport,
      headers: req.headers,
      log,
    });
    if (closed) {
      await markSessionFailedToStart(infra.db, sessionId, 'socket-closed', 'the client left before the start');
      return;
    }
    session = opened.session;
    trackSession(infra, session);
    session.onEnd = (reason) => {
      sendJson({ type: 'session.ended', reason });
      close(1000, null);
    };
    sendJson({ type: 'session.started', sessionId, agentId, inputRate: DIRECT_IN_RATE, outputRate: outRate });
    await session.start({});
    log.info({ sessionId }, 'direct session started');
    for (const e of early.splice(0)) handle(e.data, e.isBinary);
  } catch (e) {
    if (e instanceof SessionAlreadyStartedError) return refuseUsedToken();
    log.warn(
      { sessionId, code: isApiError(e) ? e.code : 'internal', err: (e as Error).message },
      'direct session could not start',
    );
    const msg = isApiError(e) ? e.message : 'internal error';
    await markSessionFailedToStart(infra.db, sessionId, 'start-failed', msg).catch(() => {});
    close(1011, isApiError(e) ? e.code : 'internal_error', msg);
  }

  function refuseUsedToken(): void {
    log.warn({ sessionId, reason: 'session_token_used' }, 'direct session refused');
    close(CLOSE.tokenUsed, 'session_token_used', 'This session token was used already or its session expired.');
  }
}
