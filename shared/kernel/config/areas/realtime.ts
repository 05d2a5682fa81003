import { z } from 'zod';
import { envBool, envInt } from '../env.ts';

/** Environment variables of the realtime area (merged into EnvSchema; documented in docs/realtime.md). */
export const realtimeEnv = {
  REALTIME_SESSION_SECRET: z
    .string()
    .min(32)
    .optional()
    .describe(
      'HS256 key of the short-lived session tokens (≥ 32 chars), the same on every api and realtime process. ' +
        'Required (boot refuses without it) when api and realtime run apart, with PROCESSES > 1, and in production; ' +
        'only the one-process mode invents a random one when unset.',
    ),
  REALTIME_TOKEN_TTL_SECONDS: envInt(30, 3600)
    .default(300)
    .describe('Lifetime of a session token from POST /v1/sessions/twilio until the stream must have started.'),
  REALTIME_PHONE_STT_PROVIDER: z
    .string()
    .default('deepgram')
    .describe(
      'STT engine for phone (8 kHz) sessions: a streaming vendor STT, or "default" for the local streaming ' +
        'recogniser (pocketsphinx; docs/speech.md for its accuracy).',
    ),
  REALTIME_PHONE_STT_LOCAL_FALLBACK: envBool
    .default(true)
    .describe(
      "A phone session whose REALTIME_PHONE_STT_PROVIDER has no key (platform or the developer's stored one) is " +
        'heard by the local streaming recogniser, and one whose vendor STT fails mid-call falls back to it (the ' +
        'unfinalized utterance replayed, the vendor tried again after 60 s of audio); false = refuse the first with ' +
        "400 provider_unavailable and let the second's STT fail.",
    ),
  REALTIME_ENDPOINTING_MS: envInt(100, 3000)
    .default(300)
    .describe(
      'Silence after speech that ends a caller turn (VAD endpointing); with adaptive endpointing, the window when ' +
        'what was said gives no hint. Agents may override it (turnTaking.endpointingMs).',
    ),
  REALTIME_ENDPOINTING_ADAPTIVE: envBool
    .default(true)
    .describe(
      'Adaptive endpointing: a shorter silence window after a complete utterance, a longer one after an unfinished ' +
        'one (see docs/realtime.md); false = always REALTIME_ENDPOINTING_MS. Agents may override it.',
    ),
  REALTIME_ENDPOINTING_COMPLETE_MS: envInt(100, 3000)
    .default(200)
    .describe('Adaptive endpointing: the silence window after a complete utterance (final punctuation, a question).'),
  REALTIME_ENDPOINTING_INCOMPLETE_MS: envInt(100, 5000)
    .default(800)
    .describe('Adaptive endpointing: the silence window after a trailing "and", "because", a number being read out.'),
  REALTIME_PREEMPTIVE_REPLIES: envBool
    .default(true)
    .describe(
      'Start the reply (LLM, first TTS) when the caller goes quiet, before the endpoint; held, and cancelled if the ' +
        'caller goes on or the final transcript differs. Agents may override it (turnTaking.preemptive).',
    ),
  REALTIME_TURN_EAGERNESS: z
    .enum(['low', 'normal', 'high'])
    .default('normal')
    .describe(
      'How readily a caller turn is taken when words, prosody and the STT lag disagree: high shortens the windows ' +
        '(never under REALTIME_ENDPOINTING_COMPLETE_MS), low lengthens them (never over the incomplete window). ' +
        'Agents may override it (turnTaking.eagerness).',
    ),
  REALTIME_BARGE_IN_MIN_MS: envInt(60, 2000)
    .default(200)
    .describe('Caller speech shorter than this never interrupts the agent (noises, clicks).'),
  REALTIME_BARGE_IN_FORCE_MS: envInt(200, 5000)
    .default(900)
    .describe('Caller speech this long interrupts even before a transcript arrives.'),
  REALTIME_MIN_CALL_SECONDS: envInt(10, 3600)
    .default(90)
    .describe(
      'A per-call maxDurationSeconds (agent, session, campaign) below this is refused with a 400: one connected minute plus one reply.',
    ),
  REALTIME_MAX_SESSION_SECONDS: envInt(10, 4 * 3600)
    .default(3600)
    .describe('A session is ended after this long.'),
  REALTIME_RECORDINGS: envBool.default(true).describe('Store both sides of every call as a stereo WAV in S3.'),
  TWILIO_ACCOUNT_SID: z.string().min(1).optional().describe('Twilio account for outbound calls (dispatcher).'),
  TWILIO_AUTH_TOKEN: z
    .string()
    .min(1)
    .optional()
    .describe('Twilio auth token: places outbound calls and verifies X-Twilio-Signature on callbacks.'),
  TWILIO_MACHINE_DETECTION: z
    .enum(['off', 'Enable', 'DetectMessageEnd'])
    .default('off')
    .describe(
      'Ask Twilio for asynchronous answering-machine detection on outbound calls (MachineDetection; the account ' +
        "needs AMD). The platform's own detector runs either way (REALTIME_AMD); the first answer wins.",
    ),
  REALTIME_AMD: envBool
    .default(true)
    .describe(
      "Detect answering machines on outbound calls from the call's first seconds of audio (greeting length, " +
        'turn-taking pause, beep); the agent waits for the answer before its first message.',
    ),
  TWILIO_API_BASE_URL: z
    .url()
    .optional()
    .describe('Twilio REST base URL override (a local protocol double in tests); default https://api.twilio.com.'),
  REALTIME_SESSIONS_PER_DEVELOPER: z
    .string()
    .regex(/^(\w+:\d+)(,\w+:\d+)*$/)
    .default('starter:5,pro:25,scale:100')
    .describe(
      'Realtime sessions (Twilio and direct) one developer may have running at once, by tier (tier:count,…); one ' +
        'more is 429 concurrent_sessions_limited at creation and a socket closed with 4429 at connect.',
    ),
  REALTIME_AUTH_TIMEOUT_MS: envInt(500, 120_000)
    .default(10_000)
    .describe('A session socket that has not authenticated (a Twilio stream without its start) is closed after this.'),
  REALTIME_IDLE_TIMEOUT_SECONDS: envInt(5, 3600)
    .default(60)
    .describe('A session socket that sends nothing (no audio, no message) for this long is closed (4408).'),
} satisfies z.ZodRawShape;
