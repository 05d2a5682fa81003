import { z } from 'zod';
import { envBool, envInt } from '../env.ts';

/**
 * Admission control of realtime calls (docs/admission.md). Merged into EnvSchema. The default capacity comes from
 * `npm run bench:capacity` (calls per core within the latency targets); set REALTIME_MAX_SESSIONS where the
 * process cannot see its real CPU share (a container CPU limit) or after benchmarking the node's own hardware.
 */
export const admissionEnv = {
  REALTIME_ADMISSION: envBool
    .default(true)
    .describe('Refuse new calls past the realtime fleet capacity (busy TwiML for Twilio, 503 for direct sessions).'),
  REALTIME_CALLS_PER_CORE: z.coerce
    .number()
    .positive()
    .max(1000)
    // Measured with the default local TTS (flite) on a 2-core machine: 50 calls held turn p95 ≈ 620 ms, 100 did
    // not (1.9 s) — docs/realtime.md. With a vendor TTS a core holds more (≈ 150): run bench:capacity.
    .default(25)
    .describe(
      'Concurrent calls one CPU core holds within the turn-latency contract (bench:capacity prints it); a realtime ' +
        'process takes this × its cores ÷ PROCESSES, unless REALTIME_MAX_SESSIONS is set.',
    ),
  REALTIME_LOCAL_STT_CALLS_PER_CORE: z.coerce
    .number()
    .positive()
    .max(1000)
    // From the decoder's measured cost (bench:local-stt --sets stream: 0.066 s of CPU per second of a caller's
    // speech, general model, load ≈ 5 on 2 cores) added to a local-TTS call's share of a core (1/25), callers
    // speaking a third of the time: 1 / (1/25 + 0.066/3) = 16 (docs/admission.md). Run bench:capacity --stt local.
    .default(16)
    .describe(
      'Calls per core when phone calls are heard by the local streaming recogniser (REALTIME_PHONE_STT_PROVIDER=' +
        'default, or no platform key for the phone STT with the local fallback on): it costs CPU per call; the ' +
        'capacity takes the smaller of this and REALTIME_CALLS_PER_CORE.',
    ),
  REALTIME_MAX_SESSIONS: envInt(0, 100_000)
    .default(0)
    .describe('Concurrent calls this realtime process accepts; 0 = REALTIME_CALLS_PER_CORE × cores ÷ PROCESSES.'),
  REALTIME_ADMISSION_ANSWER: z
    .enum(['busy', 'message'])
    .default('busy')
    .describe(
      'What a Twilio call past capacity hears: `busy` (<Reject reason="busy"/>: the caller hears a busy signal) or ' +
        '`message` (REALTIME_ADMISSION_MESSAGE spoken, then hang up).',
    ),
  REALTIME_ADMISSION_MESSAGE: z
    .string()
    .min(1)
    .max(500)
    .default('All our lines are busy right now. Please call again in a few minutes.')
    .describe(
      'Spoken to a Twilio caller refused for capacity when REALTIME_ADMISSION_ANSWER=message, and always to an ' +
        'answered outbound or campaign call the platform cannot take (its callee cannot be given a busy signal).',
    ),
  REALTIME_ADMISSION_RETRY_AFTER_SECONDS: envInt(1, 3600)
    .default(15)
    .describe('Retry-After of the 503 a direct session gets past capacity.'),
} satisfies z.ZodRawShape;
