import { mulawBase64ToPcm, mulawToPcm, pcmToMulaw } from '../../../shared/kernel/audio/mulaw.ts';
import { plainMediaFrame } from './media-frame.ts';
import { NUMERIC, TwilioInbound } from './messages.ts';

/** Twilio sends μ-law at 8 kHz (its media frames are 20 ms: 160 samples, 160 bytes). */
export const TWILIO_RATE = 8000;

/** What went wrong with an inbound frame; the transport closes the socket cleanly and logs the kind. */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
  constructor(
    readonly kind: 'binary_frame' | 'malformed_json' | 'invalid_message' | 'out_of_order' | 'unauthorized',
    message: string,
  ) {
    super(message);
  }
}

/** Inbound events after decoding: media carries PCM s16le at 8 kHz (the codec stays here, at the edge). */
export type InboundEvent =
  | { event: 'connected' }
  | {
      event: 'start';
      streamSid: string;
      callSid: string;
      accountSid: string;
      customParameters: Record<string, string>;
    }
  | { event: 'media'; pcm: Buffer; timestampMs: number; track: string }
  | { event: 'dtmf'; digit: string }
  | { event: 'mark'; name: string }
  | { event: 'stop'; callSid: string };

/** Decodes one WebSocket message from Twilio. Binary frames, bad JSON and unknown shapes are protocol errors. */
export function parseTwilioMessage(data: Buffer | string, isBinary: boolean): InboundEvent {
  if (isBinary) throw new ProtocolError('binary_frame', 'binary frames are not part of the Twilio protocol');
  // Caller audio, 50 frames a second per call, read from the bytes; any other message or shape goes on below.
  if (typeof data !== 'string') {
    const frame = plainMediaFrame(data);
    if (frame) return frame;
  }
  let json: unknown;
  try {
    json = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'));
  } catch {
    throw new ProtocolError('malformed_json', 'message is not valid JSON');
  }
  const media = mediaOf(json);
  if (media) return media;
  const parsed = TwilioInbound.safeParse(json);
  if (!parsed.success) {
    const ev = (json as { event?: unknown })?.event;
    throw new ProtocolError('invalid_message', `invalid ${typeof ev === 'string' ? ev.slice(0, 20) : ''} message`);
  }
  const m = parsed.data;
  switch (m.event) {
    case 'connected':
      return { event: 'connected' };
    case 'start':
      return {
        event: 'start',
        streamSid: m.start.streamSid,
        callSid: m.start.callSid,
        accountSid: m.start.accountSid,
        customParameters: m.start.customParameters,
      };
    case 'media':
      return {
        event: 'media',
        pcm: mulawToPcm(Buffer.from(m.media.payload, 'base64')),
        timestampMs: Number(m.media.timestamp),
        track: m.media.track,
      };
    case 'dtmf':
      return { event: 'dtmf', digit: m.dtmf.digit };
    case 'mark':
      return { event: 'mark', name: m.mark.name };
    case 'stop':
      return { event: 'stop', callSid: m.stop.callSid };
  }
}

/**
 * A media message (50 a second per call) checked by hand: it accepts exactly what the TwilioMedia schema accepts,
 * without a schema parse and its copied output per frame. Anything else (null) goes through the schema, which
 * accepts the other events and reports what is wrong.
 */
function mediaOf(json: unknown): Extract<InboundEvent, { event: 'media' }> | null {
  if (typeof json !== 'object' || json === null) return null;
  const m = json as { event?: unknown; sequenceNumber?: unknown; streamSid?: unknown; media?: unknown };
  if (m.event !== 'media' || typeof m.streamSid !== 'string') return null;
  if (typeof m.sequenceNumber !== 'string' || !NUMERIC.test(m.sequenceNumber)) return null;
  if (typeof m.media !== 'object' || m.media === null || Array.isArray(m.media)) return null;
  const { track, chunk, timestamp, payload } = m.media as Record<string, unknown>;
  if (typeof track !== 'string' || typeof chunk !== 'string' || typeof timestamp !== 'string') return null;
  if (typeof payload !== 'string' || !NUMERIC.test(chunk) || !NUMERIC.test(timestamp)) return null;
  // Validated (the schema's base64 pattern) and decoded in one pass; null → the schema reports the bad payload.
  const pcm = mulawBase64ToPcm(payload);
  return pcm ? { event: 'media', pcm, timestampMs: Number(timestamp), track } : null;
}

/** Server → Twilio. `pcm` is s16le at 8 kHz; it leaves as base64 raw μ-law with no header. */
export function mediaMessage(streamSid: string, pcm8k: Buffer): string {
  return JSON.stringify({ event: 'media', streamSid, media: { payload: pcmToMulaw(pcm8k).toString('base64') } });
}

export function markMessage(streamSid: string, name: string): string {
  return JSON.stringify({ event: 'mark', streamSid, mark: { name } });
}

export function clearMessage(streamSid: string): string {
  return JSON.stringify({ event: 'clear', streamSid });
}

/**
 * Order of the Twilio flow: `connected` (optional, first), `start` exactly once, then media/dtmf/mark, then `stop`.
 * Anything else is out of order.
 */
export class TwilioFlow {
  private state: 'new' | 'connected' | 'started' | 'stopped' = 'new';

  /** Runs for every message (media 50 times a second): no closure or error is made unless the order is wrong. */
  check(ev: InboundEvent['event']): void {
    const s = this.state;
    switch (ev) {
      case 'connected':
        if (s !== 'new') throw outOfOrder(ev, s);
        this.state = 'connected';
        return;
      case 'start':
        if (s !== 'new' && s !== 'connected') throw outOfOrder(ev, s);
        this.state = 'started';
        return;
      case 'stop':
        if (s !== 'started') throw outOfOrder(ev, s);
        this.state = 'stopped';
        return;
      default:
        if (s !== 'started') throw outOfOrder(ev, s);
    }
  }
}

function outOfOrder(ev: string, state: string): ProtocolError {
  return new ProtocolError('out_of_order', `${ev} is not allowed in state ${state}`);
}
