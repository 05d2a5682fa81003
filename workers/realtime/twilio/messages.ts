import { z } from 'zod';

/**
 * Twilio Media Streams messages (PROTOCOLS.md), exactly as Twilio sends them: JSON text frames whose
 * `sequenceNumber`, `chunk` and `timestamp` are strings. Unknown extra fields are tolerated (Twilio adds some).
 */
/** A decimal count in a string (Twilio's sequenceNumber, chunk, timestamp). */
export const NUMERIC = /^\d+$/;
/** Standard base64 (Twilio's media payload). */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const NumStr = z.string().regex(NUMERIC);

export const TwilioConnected = z.object({
  event: z.literal('connected'),
  protocol: z.string(),
  version: z.string(),
});

export const TwilioStart = z.object({
  event: z.literal('start'),
  sequenceNumber: NumStr,
  streamSid: z.string().min(1),
  start: z.object({
    accountSid: z.string(),
    streamSid: z.string().min(1),
    callSid: z.string().min(1),
    tracks: z.array(z.string()),
    customParameters: z.record(z.string(), z.string()).default({}),
    mediaFormat: z.object({
      encoding: z.literal('audio/x-mulaw'),
      sampleRate: z.literal(8000),
      channels: z.literal(1),
    }),
  }),
});

export const TwilioMedia = z.object({
  event: z.literal('media'),
  sequenceNumber: NumStr,
  streamSid: z.string(),
  media: z.object({
    track: z.string(),
    chunk: NumStr,
    timestamp: NumStr,
    payload: z.string().regex(BASE64),
  }),
});

export const TwilioDtmf = z.object({
  event: z.literal('dtmf'),
  streamSid: z.string(),
  sequenceNumber: NumStr,
  dtmf: z.object({ track: z.string(), digit: z.string().regex(/^[0-9*#A-D]$/) }),
});

export const TwilioMark = z.object({
  event: z.literal('mark'),
  streamSid: z.string(),
  sequenceNumber: NumStr,
  mark: z.object({ name: z.string() }),
});

export const TwilioStop = z.object({
  event: z.literal('stop'),
  sequenceNumber: NumStr,
  streamSid: z.string(),
  stop: z.object({ accountSid: z.string(), callSid: z.string() }),
});

export const TwilioInbound = z.discriminatedUnion('event', [
  TwilioConnected,
  TwilioStart,
  TwilioMedia,
  TwilioDtmf,
  TwilioMark,
  TwilioStop,
]);
export type TwilioInbound = z.infer<typeof TwilioInbound>;
export type TwilioStart = z.infer<typeof TwilioStart>;
