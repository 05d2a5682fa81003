import { z } from 'zod';
import { parseCpuList } from '../../process/cpu-affinity.ts';
import { envBool, envInt } from '../env.ts';

function isCpuList(v: string): boolean {
  try {
    return parseCpuList(v).length > 0;
  } catch {
    return false;
  }
}

/** Environment variables of the speech area (merged into EnvSchema; documented in the README). */
export const speechEnv = {
  SPEECH_POCKETSPHINX_MODEL_DIR: z
    .string()
    .default('/usr/share/pocketsphinx/model/en-us')
    .describe(
      'Folder of the pocketsphinx US-English model (en-us/, en-us.lm.bin, cmudict-en-us.dict) for the default STT',
    ),
  SPEECH_LM_DIR: z
    .string()
    .min(1)
    .default('.data/language-models')
    .describe('Local folder of the per-agent language models of the default STT (one folder per content hash)'),
  SPEECH_LM_BACKGROUND_DIR: z
    .string()
    .default('')
    .describe(
      'Folder of the pruned general model every per-agent build starts from (16 MB, one file per general model); empty = SPEECH_LM_DIR',
    ),
  SPEECH_LM_AUTO_BUILD: envBool
    .default(true)
    .describe(
      "Build an agent's language model when it is saved, when a call finds it missing and before an agent test (false: only models already built are used)",
    ),
  SPEECH_LM_MAX_CHARS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(2_000_000)
    .default(100_000)
    .describe("Characters of an agent's text (prompt, tools, collection) its language model is built from"),
  SPEECH_LM_BUILD_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(600_000)
    .default(120_000)
    .describe('A per-agent language model build running longer is killed (the general model serves on)'),
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
    .describe(
      "flite-server workers per process for live calls' first audio (as many again run their later sentences at " +
        "nice 10, and as many developers' non-live syntheses at nice 10)",
    ),
  SPEECH_FLITE_CPU_BASE_MS: envInt(0, 600_000)
    .default(1000)
    .describe('CPU deadline of one flite piece: this many ms, plus SPEECH_FLITE_CPU_MS_PER_CHAR a character'),
  SPEECH_FLITE_CPU_MS_PER_CHAR: envInt(0, 10_000)
    .default(50)
    .describe(
      'CPU ms a character a flite piece may use (slowest real text measured: 27); past it the worker is killed and ' +
        'the request charged for the work done (docs/speech.md)',
    ),
  SPEECH_PS_STREAM_BIN: z
    .string()
    .default('')
    .describe(
      'Streaming pocketsphinx worker of the local live STT (built by scripts/setup.d/41-ps-stream.sh); empty = ' +
        'build/ps-stream/ps-stream. When missing, calls on the local STT are transcribed per utterance (batch)',
    ),
  SPEECH_LIVE_STT_WORKERS: envInt(0, 64)
    .default(0)
    .describe(
      'ps-stream worker processes per platform process for live calls (each hosts many calls); 0 = the cores ÷ ' +
        'PROCESSES (at least one)',
    ),
  SPEECH_LIVE_STT_HANGOVER_MS: envInt(50, 2000)
    .default(250)
    .describe('Local live STT: silence after which an utterance ends and its final transcript is sent'),
  SPEECH_LOCAL_SYNTHESES_PER_DEVELOPER: envInt(1, 1000)
    .default(2)
    .describe(
      'Syntheses one developer may have running at once on the local voices (flite, espeak-ng) in one platform ' +
        'process (/v1/synthesize, /v1/audio/speech, /v1/agents/:id/speak); one more is 429 local_syntheses_limited ' +
        '(docs/ops.md, "Limits against hostile input")',
    ),
  SPEECH_LOCAL_BATCH_CPUS: z
    .string()
    .default('')
    .refine((v) => ['', 'all'].includes(v.trim()) || isCpuList(v), 'a cpu list (e.g. 1-3 or 0,2), all, or empty')
    .describe(
      "Cpus of the local TTS's batch workers (developers' non-live syntheses, at nice 10) and of the test pool's " +
        'process, as taskset -c takes them; ' +
        'empty = every cpu this process may use but the lowest, which is left to live calls, the API and the ' +
        'database (nothing pinned where one is allowed); all = not pinned (docs/ops.md, "Limits against hostile input")',
    ),
  SPEECH_RHVOICE_SERVER_BIN: z
    .string()
    .default('')
    .describe(
      'RHVoice synthesis worker of the opt-in `rhvoice` TTS engine (built by scripts/setup.d/45-rhvoice.sh when ' +
        'RHVOICE=1); empty = build/rhvoice-server/rhvoice-server. When missing, `rhvoice` is not offered',
    ),
  SPEECH_RHVOICE_DATA_DIR: z
    .string()
    .default('/usr/share/RHVoice')
    .describe('RHVoice language and voice data (Debian rhvoice-english); without voices/slt `rhvoice` is not offered'),
  SPEECH_ESPEAK_BIN: z.string().default('espeak-ng').describe('espeak-ng binary (second voice set of the default TTS)'),
  SPEECH_MAX_AUDIO_SECONDS: envInt(1, 24 * 3600)
    .default(3 * 3600)
    .describe('Longest audio a transcription decodes; the rest is ignored'),
  SPEECH_SYNC_MAX_AUDIO_SECONDS: envInt(1, 24 * 3600)
    .default(30 * 60)
    .describe('Longest audio the synchronous /v1/transcribe accepts before asking for the async endpoint'),
  SPEECH_SYNC_LOCAL_MAX_AUDIO_SECONDS: envInt(1, 24 * 3600)
    .default(300)
    .describe(
      'Longest audio the synchronous /v1/transcribe takes on the local engine (about 1.7x real time on a busy core): longer is a 413 that points to /v1/transcribe/async',
    ),
} satisfies z.ZodRawShape;
