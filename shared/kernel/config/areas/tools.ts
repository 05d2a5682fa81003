import { z } from 'zod';

/**
 * Where the external programs are (merged into EnvSchema). Applied once at boot (shared/kernel/process/tools.ts); flite
 * and espeak-ng keep their speech-area names (SPEECH_FLITE_BIN, SPEECH_ESPEAK_BIN).
 */
export const toolsEnv = {
  FFMPEG_PATH: z.string().min(1).default('ffmpeg').describe('ffmpeg binary (audio decoding/encoding, every video job)'),
  FFPROBE_PATH: z.string().min(1).default('ffprobe').describe('ffprobe binary (media inspection of video inputs)'),
  POCKETSPHINX_PATH: z
    .string()
    .min(1)
    .default('pocketsphinx_continuous')
    .describe('pocketsphinx_continuous binary of the default STT'),
  SPHINX_LM_CONVERT_PATH: z
    .string()
    .min(1)
    .default('sphinx_lm_convert')
    .describe(
      "sphinxbase-utils' converter: per-agent language models are stored in its binary form (faster to load); without it they stay ARPA text",
    ),
  TESSERACT_PATH: z
    .string()
    .min(1)
    .default('tesseract')
    .describe('tesseract binary (on-screen text of the default video analysis)'),
  APERTIUM_PATH: z.string().min(1).default('apertium').describe('apertium binary of the default translation (dubbing)'),
} satisfies z.ZodRawShape;
