import * as mulaw from '../../kernel/audio/mulaw.ts';
import type { Scenario } from '../../contracts/agent-tests.ts';
import { ImpairedCaller, ImpairedDirectCaller, PCM_LINE } from './impaired-caller.ts';
import type { LineImpairment, MulawCodec } from './impairments.ts';
import { createDirectSession, createSession, type Target } from './session-api.ts';
import type { ReceivedMedia } from './far-end.ts';
import { tokenFromTwiml, wsUrl } from './twilio-caller.ts';

/**
 * What a scenario needs of its caller, whatever carries the call: it speaks in real time, plays the agent's audio
 * like the far end does (marks echoed as played, `clear` honoured) and records when that audio arrived. The Twilio
 * caller and the direct-protocol caller both are one.
 */
export interface ScenarioCaller {
  /** Agent audio frames, by arrival time (performance.now()). */
  readonly media: ReceivedMedia[];
  /** When each `clear` (a barge-in flushing the agent's audio) arrived. */
  readonly clears: number[];
  /** Agent audio still waiting to play. */
  readonly playing: boolean;
  /** The last mark echoed as played (not flushed) and when: a reply's end mark says it has played (reply-end.ts). */
  readonly lastPlayedMark: string | null;
  readonly lastPlayedMarkAt: number;
  /** The socket's close code once it closed; null while open. */
  readonly closeCode: number | null;
  /** How much of it, in ms (a backchannel is said only over audio still to play). */
  readonly bufferedMs: number;
  readonly closed: Promise<void>;
  start(): Promise<void>;
  /** Sends 8 kHz PCM speech in real time; resolves with the time its last frame was sent. */
  say(pcm8k: Buffer): Promise<number>;
  until(pred: () => boolean, timeoutMs?: number): Promise<void>;
  /** Hangs up. */
  stop(): void;
  close(): void;
}

/** How a scenario's call is placed on one transport. */
export interface CallTransport {
  /** The frames as this transport carries them: the seeded line impairs them in that form. */
  codec: MulawCodec;
  /** The frames' sample rate. */
  rate: number;
  /**
   * Creates the session (waiting while the platform is at capacity) and the caller that will connect to it.
   * `playout`: how many times faster than real time the caller plays the agent's audio (far-end.ts); 1 when absent.
   */
  connect(
    t: Target,
    line: LineImpairment | null,
    signal?: AbortSignal,
    playout?: number,
  ): Promise<{ sessionId: string; caller: ScenarioCaller } | { error: string }>;
}

/** A phone call over the real Twilio media-stream path: the TwiML's token, 8 kHz μ-law frames. */
const twilio: CallTransport = {
  codec: mulaw,
  rate: 8000,
  async connect(t, line, signal, playout) {
    const created = await createSession(t, signal);
    if (created.status !== 200)
      return { error: `session create answered ${created.status}: ${JSON.stringify(created.body)}` };
    const caller = new ImpairedCaller(
      { url: wsUrl(t.url, '/v1/sessions/twilio/stream'), token: tokenFromTwiml(created.body.twiml), playout },
      line,
    );
    return { sessionId: created.body.sessionId, caller };
  },
};

/** The direct protocol (a browser's or an app's call): POST /v1/sessions/direct's token, 16 kHz PCM frames. */
const websocket: CallTransport = {
  codec: PCM_LINE,
  rate: 16000,
  async connect(t, line, signal, playout) {
    const created = await createDirectSession(t, signal);
    if (created.status !== 200)
      return { error: `session create answered ${created.status}: ${JSON.stringify(created.body)}` };
    const { sessionId, token } = created.body;
    const url = wsUrl(t.url, `/v1/agents/${encodeURIComponent(t.agentId)}/session?token=${encodeURIComponent(token)}`);
    return { sessionId, caller: new ImpairedDirectCaller(url, line, playout) };
  },
};

export const CALL_TRANSPORTS: Record<Scenario['transport'], CallTransport> = { twilio, websocket };
