import { z } from 'zod';
import { AUDIO_FORMATS } from '../kernel/audio/formats.ts';
import { STT_PROVIDERS, TTS_PROVIDERS } from './providers.ts';

/** POST /v1/synthesize (contract bounds). */
export const SynthesizeBody = z.object({
  text: z.string().min(1).max(10_000),
  voiceId: z.string().min(1).max(200).default('default'),
  format: z.enum(['mp3', 'wav', 'ogg']).default('wav'),
  speed: z.number().min(0.5).max(2).default(1),
  pitch: z.number().min(0.5).max(2).default(1),
  provider: z.enum(TTS_PROVIDERS).default('default'),
});
export type SynthesizeBody = z.infer<typeof SynthesizeBody>;

/** Booleans arrive as JSON booleans or, in multipart forms, as strings. */
const FormBool = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1'),
]);

/** Options shared by /v1/transcribe and /v1/transcribe/async (JSON body or multipart fields). */
export const TranscribeOptions = z.object({
  audioUrl: z
    .url({ protocol: /^https?$/ })
    .max(4096)
    .optional(),
  language: z
    .string()
    .max(35)
    .regex(/^([a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8})*)?$/, 'must be a language code such as "en" or "en-US"')
    .default(''),
  mode: z.enum(['accurate', 'fast']).default('accurate'),
  diarize: FormBool.default(false),
  timestamps: z.enum(['segment', 'word']).default('segment'),
  provider: z.enum(STT_PROVIDERS).default('default'),
  /** Text in the recording's domain (OpenAI's field): the local engine is biased to its words, vendors get it as is. */
  prompt: z.string().max(4000).optional(),
  /**
   * Words and names the recording is likely to hold: the local engine is biased to them. A JSON array, or in a
   * multipart form one comma-separated field.
   */
  keywords: z
    .preprocess(
      (v) =>
        typeof v === 'string'
          ? v
              .split(',')
              .map((k) => k.trim())
              .filter(Boolean)
          : v,
      z
        .array(
          z
            .string()
            .min(1)
            .max(50)
            .regex(/^[\p{L}\p{N}' .-]+$/u, 'a keyword is letters, digits, spaces, "\'", "." or "-"'),
        )
        .max(100),
    )
    .optional(),
});
export type TranscribeOptions = z.infer<typeof TranscribeOptions>;

export const TranscriptSegment = z.object({
  start: z.number(),
  end: z.number(),
  text: z.string(),
  speaker: z.string().optional(),
});
export const TranscriptWord = z.object({ start: z.number(), end: z.number(), word: z.string() });
export const TranscriptionResult = z.object({
  text: z.string(),
  segments: z.array(TranscriptSegment),
  words: z.array(TranscriptWord).optional(),
  language: z.string(),
  duration: z.number(),
});
export type TranscriptionResult = z.infer<typeof TranscriptionResult>;

export const TranscriptionJob = z.object({
  id: z.string(),
  status: z.enum(['processing', 'completed', 'failed']),
  result: TranscriptionResult.optional(),
  /** While processing on an engine that reports it (the local one): seconds of audio decoded so far, of the total. */
  progress: z.object({ doneSeconds: z.number(), totalSeconds: z.number() }).optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  createdAt: z.string(),
  completedAt: z.string().optional(),
});
export type TranscriptionJob = z.infer<typeof TranscriptionJob>;

export const JobIdParams = z.object({ jobId: z.string().min(1).max(100) });

export const VoiceItem = z.object({
  id: z.string(),
  name: z.string(),
  language: z.string(),
  gender: z.enum(['male', 'female', 'neutral']),
  provider: z.string(),
});
export const VoicesQuery = z.object({
  provider: z.enum(TTS_PROVIDERS).optional(),
  language: z.string().max(35).optional(),
});
export const VoiceList = z.object({ data: z.array(VoiceItem) });

/** OpenAI-compatible POST /v1/audio/speech. */
export const OpenAiSpeechBody = z.object({
  model: z.string().min(1).max(200),
  input: z.string().min(1).max(4096),
  voice: z.union([z.string().min(1).max(200), z.object({ id: z.string().min(1).max(200) })]),
  instructions: z.string().max(4096).optional(),
  response_format: z
    .enum(AUDIO_FORMATS.filter((f) => f !== 'ogg') as ['mp3', 'wav', 'opus', 'aac', 'flac', 'pcm'])
    .default('mp3'),
  speed: z.number().min(0.25).max(4).default(1),
  stream_format: z.enum(['audio', 'sse']).default('audio'),
});
export type OpenAiSpeechBody = z.infer<typeof OpenAiSpeechBody>;

/** OpenAI-compatible POST /v1/audio/transcriptions (multipart fields besides `file`). */
export const OpenAiTranscriptionFields = z.object({
  model: z.string().min(1).max(200),
  language: z
    .string()
    .max(35)
    .regex(/^([a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8})*)?$/, 'must be an ISO-639-1 language code such as "en"')
    .default(''),
  prompt: z.string().max(10_000).optional(),
  response_format: z.enum(['json', 'text', 'srt', 'verbose_json', 'vtt']).default('json'),
  temperature: z.coerce.number().min(0).max(1).default(0),
  'timestamp_granularities[]': z.array(z.enum(['word', 'segment'])).default([]),
  stream: FormBool.default(false),
});
export type OpenAiTranscriptionFields = z.infer<typeof OpenAiTranscriptionFields>;
