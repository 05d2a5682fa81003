import { z } from 'zod';
import { envInt } from '../env.ts';

/** Environment variables of the speech area (merged into EnvSchema; documented in the README). */
export const speechEnv = {
  SPEECH_POCKETSPHINX_MODEL_DIR: z
    .string()
    .default('/usr/share/pocketsphinx/model/en-us')
    .describe(
      'Folder of the pocketsphinx US-English model (en-us/, en-us.lm.bin, cmudict-en-us.dict) for the default STT',
    ),
  SPEECH_FLITE_BIN: z.string().default('flite').describe('flite binary of the default TTS engine'),
  SPEECH_FLITE_SERVER_BIN: z
    .string()
    .default('')
    .describe(
      'Long-lived flite synthesis worker (built by scripts/setup.d/40-flite-server.sh); empty = ' +
        'build/flite-server/flite-server. When missing, flite is started once per sentence instead',
    ),
  SPEECH_FLITE_WORKERS: envInt(1, 64)
    .default(2)
    .describe('flite-server workers per process for first audio (as many again run later sentences at nice 10)'),
  SPEECH_FLITE_CPU_BASE_MS: envInt(0, 600_000)
    .default(1000)
    .describe('CPU deadline of one flite piece: this many ms, plus SPEECH_FLITE_CPU_MS_PER_CHAR a character'),
  SPEECH_FLITE_CPU_MS_PER_CHAR: envInt(0, 10_000)
    .default(50)
    .describe(
      'CPU ms a character a flite piece may use (slowest real text measured: 27); past it the worker is killed and ' +
        'the request charged for the work done (docs/speech.md)',
    ),
  SPEECH_ESPEAK_BIN: z.string().default('espeak-ng').describe('espeak-ng binary (second voice set of the default TTS)'),
  SPEECH_MAX_AUDIO_SECONDS: envInt(1, 24 * 3600)
    .default(3 * 3600)
    .describe('Longest audio a transcription decodes; the rest is ignored'),
  SPEECH_SYNC_MAX_AUDIO_SECONDS: envInt(1, 24 * 3600)
    .default(30 * 60)
    .describe('Longest audio the synchronous /v1/transcribe accepts before asking for the async endpoint'),
} satisfies z.ZodRawShape;
