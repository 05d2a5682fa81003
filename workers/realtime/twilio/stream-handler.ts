import type { WebSocket } from 'ws';
import { isApiError } from '../../../shared/kernel/errors/api-error.ts';
import { admitRealtimeSession, CLOSE } from '../../../shared/domains/realtime/session-claim.ts';
import { SessionAlreadyStartedError } from '../../../shared/domains/realtime/sessions.ts';
import { sessionSecret } from '../../../shared/domains/realtime/secret.ts';
import { verifySessionToken } from '../../../shared/domains/realtime/token.ts';
import type { Infra } from '../../../shared/platform/infra.ts';
import { IdleWatch } from '../idle-watch.ts';
import { openSession } from '../call/bootstrap.ts';
import { campaignCallContext, campaignStopReason, refuseCampaignStream, speakRefusal } from '../campaign-context.ts';
import type { CallSession } from '../call/call-session.ts';
import type { SessionTransport } from '../call/types.ts';
import { trackSession } from '../call/live.ts';
import { TraceStore } from '../call/trace-store.ts';
import {
  clearMessage,
  markMessage,
  mediaMessage,
  parseTwilioMessage,
  ProtocolError,
  TWILIO_RATE,
  TwilioFlow,
  type InboundEvent,
} from './serializer.ts';

/** Start errors that mean money cannot fund the call (the balance, a daily cap). */
const UNFUNDED = new Set(['insufficient_credits', 'spending_cap_reached']);

/** Close codes: 1000 normal, 1003 unsupported data (binary), 1007 bad payload, 1008 policy (auth), 1011 server error. */
const CLOSE_FOR: Record<ProtocolError['kind'], number> = {
  binary_frame: 1003,
  malformed_json: 1007,
  invalid_message: 1007,
  out_of_order: 1008,
  unauthorized: 1008,
};

/** Frames buffered while the session starts (agent, engines, runtime load). 2 s of audio. */
const MAX_EARLY_EVENTS = 100;
/** The longest agent audio one outbound `media` message carries (ms): see AudioSink.maxChunkMs. */
const TWILIO_MAX_CHUNK_MS = 1000;

/**
 * One Twilio media stream. Follows the flow exactly (connected → start → media/dtmf/mark → stop); authenticates
 * from start.customParameters.token; any protocol violation closes the socket cleanly with a logged reason and
 * ends the session — never an exception out of the handler.
 */
export function handleTwilioStream(infra: Infra, socket: WebSocket): void {
  const log = infra.log.child({ component: 'twilio-stream' });
  const flow = new TwilioFlow();
  let session: CallSession | null = null;
  let starting = false;
  let streamSid = '';
  let closed = false;
  /** The campaign attempt this call is (its hang-up reason names why the platform ended it). */
  let taskId: string | null = null;
  /** Set by Twilio's `stop`: the session is being stopped with its reason (the socket closing after must not win). */
  let stopping = false;
  const early: InboundEvent[] = [];

  const close = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    try {
      socket.close(code, reason.slice(0, 120));
    } catch {
      socket.terminate();
    }
  };

  const transport: SessionTransport = {
    channel: 'twilio',
    inRate: TWILIO_RATE,
    outRate: TWILIO_RATE,
    // Twilio buffers what it is sent and plays it in order: audio that is ready goes in pieces of up to a second.
    maxChunkMs: TWILIO_MAX_CHUNK_MS,
    sendAudio: (pcm) => send(mediaMessage(streamSid, pcm)),
    sendMark: (name) => send(markMessage(streamSid, name)),
    sendClear: () => send(clearMessage(streamSid)),
    event: () => {},
  };
  function send(text: string): void {
    if (socket.readyState === socket.OPEN) socket.send(text);
  }

  const dispatch = (ev: InboundEvent) => {
    if (!session) return;
    if (ev.event === 'media') session.onAudio(ev.pcm);
    else if (ev.event === 'dtmf') session.onDtmf(ev.digit);
    else if (ev.event === 'mark') session.onMark(ev.name);
  };

  const start = async (ev: Extract<InboundEvent, { event: 'start' }>) => {
    starting = true;
    streamSid = ev.streamSid;
    const claims = await verifySessionToken(sessionSecret(infra), ev.customParameters.token, 'twilio');
    if (!claims) {
      log.warn({ reason: 'invalid_session_token', callSid: ev.callSid }, 'twilio stream rejected');
      return close(1008, 'invalid session token');
    }
    // One stream per token: claim the pending session (a replayed or expired token finds nothing to claim),
    // within the developer's cap on running sessions.
    const admitted = await admitRealtimeSession(infra, {
      sessionId: claims.sid,
      developerId: claims.dev,
      agentId: claims.agt,
      channel: 'twilio',
      claim: true,
      callSid: ev.callSid,
      streamSid: ev.streamSid,
    });
    if (admitted !== 'admitted') {
      const used = admitted === 'used';
      // A campaign callee must not be answered into silence: they hear the operator's message; the attempt re-queues.
      if (admitted === 'limit') await refuseCampaignStream(infra, claims.tsk, ev.callSid, log);
      log.warn(
        { reason: used ? 'session_token_used' : 'session_limit', sessionId: claims.sid },
        'twilio stream rejected',
      );
      return close(
        used ? CLOSE.tokenUsed : CLOSE.sessionLimit,
        used ? 'session_token_used' : 'concurrent_sessions_limited',
      );
    }
    clearTimeout(authTimer);
    try {
      // An outbound campaign call: the recipient's variables feed the prompt and the first message.
      taskId = claims.tsk ?? null;
      // Inbound: the session-create body's variables, carried in the token.
      const variables = (claims.tsk ? await campaignCallContext(infra, claims.tsk) : null) ?? claims.var ?? null;
      const opened = await openSession(infra, {
        variables,
        sessionId: claims.sid,
        developerId: claims.dev,
        agentId: claims.agt,
        instanceId: claims.ins,
        ...(claims.ver ? { agentVersion: claims.ver } : {}),
        callerPhone: claims.tsk ? claims.to : claims.from,
        ...(claims.tsk ? { taskId: claims.tsk } : {}),
        channel: 'twilio',
        transport,
        log,
      });
      if (closed) return;
      session = opened.session;
      trackSession(infra, session);
      session.onEnd = () => close(1000, 'session ended');
      await session.start({ callSid: ev.callSid, streamSid: ev.streamSid });
      log.info({ sessionId: claims.sid, callSid: ev.callSid }, 'twilio session started');
      for (const e of early.splice(0)) dispatch(e);
    } catch (e) {
      if (e instanceof SessionAlreadyStartedError) return close(CLOSE.tokenUsed, 'session_token_used');
      const msg = isApiError(e) ? e.message : 'internal error';
      log.warn(
        { sessionId: claims.sid, code: isApiError(e) ? e.code : 'internal', err: (e as Error).message },
        'twilio session could not start',
      );
      await new TraceStore(infra.db, claims.sid).failedToStart('start-failed', msg).catch(() => {});
      // Money that cannot fund the first minute: the caller hears the operator's message, not a dead line.
      if (isApiError(e) && UNFUNDED.has(e.code)) {
        const why = `${e.code} when the media stream started`;
        if (!(await refuseCampaignStream(infra, claims.tsk, ev.callSid, log, why)))
          await speakRefusal(infra, ev.callSid, log);
      }
      close(1011, isApiError(e) ? e.code : 'internal_error');
    }
  };

  // A socket that never sends its start (the token) holds a connection for nothing; one that goes quiet (Twilio
  // sends media every 20 ms, silence included) has lost its call.
  const authTimer = setTimeout(() => {
    if (!starting) close(CLOSE.timeout, 'auth_timeout');
  }, infra.config.REALTIME_AUTH_TIMEOUT_MS).unref();
  const idle = new IdleWatch(infra.config.REALTIME_IDLE_TIMEOUT_SECONDS * 1000, () =>
    close(CLOSE.timeout, 'idle_timeout'),
  );

  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (closed) return;
    idle.touch();
    try {
      const ev = parseTwilioMessage(data, isBinary);
      flow.check(ev.event);
      switch (ev.event) {
        case 'connected':
          return;
        case 'start':
          void start(ev).catch((e: Error) => {
            log.error({ err: e.message }, 'twilio start failed');
            close(1011, 'internal_error');
          });
          return;
        case 'stop':
          if (!session) return close(1000, 'stopped');
          stopping = true;
          void campaignStopReason(infra, taskId, 'caller-hangup')
            .then((reason) => session?.stop(reason))
            .finally(() => close(1000, 'stopped'));
          return;
        default:
          if (session) dispatch(ev);
          else if (starting && early.length < MAX_EARLY_EVENTS) early.push(ev);
      }
    } catch (e) {
      const kind = e instanceof ProtocolError ? e.kind : 'invalid_message';
      log.warn({ reason: kind, sessionId: session ? undefined : null }, 'twilio protocol error; closing');
      close(e instanceof ProtocolError ? CLOSE_FOR[e.kind] : 1011, kind);
      if (!stopping) void session?.stop('protocol-error');
    }
  });
  socket.on('close', () => {
    closed = true;
    clearTimeout(authTimer);
    idle.stop();
    if (!stopping) void session?.stop('socket-closed');
  });
  socket.on('error', (e) => log.warn({ err: e.message }, 'twilio socket error'));
}
