import { z } from 'zod';
import { STT_PROVIDERS, TTS_PROVIDERS } from './providers.ts';

/**
 * The Video area's contract: request bodies of POST /v1/video/*, the Video job resource, the analyze result and
 * the provider enums. Provider ids: `default` is the local engine (CPU, no key); neural engines are self-hosted
 * model servers on GPU nodes (VIDEO_MODEL_SERVERS); commercial ones call the vendor with a stored/platform key.
 */
export const VIDEO_JOB_TYPES = ['generate', 'avatar', 'lipsync', 'dub', 'analyze'] as const;
export type VideoJobType = (typeof VIDEO_JOB_TYPES)[number];
export const VIDEO_JOB_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;

/**
 * Avatar engines: the local `default`, five self-hosted neural engines on the service's GPUs behind the
 * model-server contract (billed per generated second), and one commercial engine on the caller's own key.
 */
export const AVATAR_GPU_PROVIDERS = ['sadtalker', 'liveportrait', 'hallo', 'echomimic', 'aniportrait'] as const;
export const AVATAR_PROVIDERS = ['default', ...AVATAR_GPU_PROVIDERS, 'heygen'] as const;
/** Lip-sync: three self-hosted, two commercial (synclabs needs the caller's key), plus the local default. */
export const LIPSYNC_PROVIDERS = ['default', 'wav2lip', 'musetalk', 'latentsync', 'synclabs', 'replicate'] as const;
/** Analysis: one commercial (twelvelabs, caller's key), the others self-hosted. */
export const ANALYSIS_PROVIDERS = ['default', 'twelvelabs', 'videollama', 'qwenvl'] as const;
/**
 * Text-to-video: open-ended. `auto` picks the first configured self-hosted model server, else `default` (the
 * typographic title card, labelled `default:title-card` in results). Commercial: runway, luma.
 */
export const GENERATE_PROVIDERS = ['auto', 'default', 'runway', 'luma', 'hunyuanvideo', 'wan', 'ltxvideo'] as const;

export const VIDEO_ERROR_CODES = [
  'provider_timeout',
  'no_face_detected',
  'input_unreadable',
  'input_too_large',
  'engine_unavailable',
  'provider_error',
  'unsupported_language',
  'internal_error',
] as const;
export type VideoErrorCode = (typeof VIDEO_ERROR_CODES)[number];

const Url = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(2048);
const LanguageTag = z
  .string()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag such as "es" or "pt-BR"');

const common = {
  webhook_url: Url.optional().describe('Notified once (signed, Standard Webhooks) when the job completes or fails'),
};

export const GenerateVideoBody = z.strictObject({
  prompt: z.string().min(1).max(2000),
  negative_prompt: z.string().max(2000).optional(),
  duration_seconds: z.number().min(1).max(30).default(5),
  width: z.int().min(256).max(1920).default(768),
  height: z.int().min(256).max(1080).default(512),
  fps: z.int().min(8).max(60).default(24),
  provider: z.enum(GENERATE_PROVIDERS).default('auto'),
  ...common,
});
export type GenerateVideoBody = z.infer<typeof GenerateVideoBody>;

export const AvatarVideoBody = z
  .strictObject({
    image_url: Url.describe('JPG or PNG with a visible face'),
    audio_url: Url.optional(),
    text: z.string().min(1).max(10_000).optional(),
    voice_id: z.string().min(1).max(200).default('default'),
    tts_provider: z.enum(TTS_PROVIDERS).default('default'),
    target_language: LanguageTag.optional(),
    provider: z.enum(AVATAR_PROVIDERS).default('default'),
    ...common,
  })
  .refine((b) => Boolean(b.audio_url) !== Boolean(b.text), {
    message: 'give either audio_url or text (with voice_id), not both',
    path: ['audio_url'],
  });
export type AvatarVideoBody = z.infer<typeof AvatarVideoBody>;

export const LipsyncVideoBody = z.strictObject({
  video_url: Url,
  audio_url: Url.describe('Replacement audio'),
  provider: z.enum(LIPSYNC_PROVIDERS).default('default'),
  ...common,
});
export type LipsyncVideoBody = z.infer<typeof LipsyncVideoBody>;

export const DubVideoBody = z.strictObject({
  video_url: Url,
  target_language: LanguageTag,
  voice_id: z.string().min(1).max(200).optional(),
  tts_provider: z.enum(TTS_PROVIDERS).default('default'),
  lipsync_provider: z.enum(LIPSYNC_PROVIDERS).default('default'),
  stt_provider: z
    .enum(STT_PROVIDERS)
    .default('default')
    .describe(
      'STT engine that transcribes the source: `default` (local, English only) or a vendor that detects and supports other languages',
    ),
  source_language: LanguageTag.optional().describe(
    'When omitted, detected by the STT engine (the local `default` recogniser assumes English)',
  ),
  translate_provider: z
    .enum(['auto', 'default', 'deepl'])
    .default('auto')
    .describe(
      'Translator: `default` is local Apertium (installed pairs, pivoting through Spanish or English); `deepl` the vendor; `auto` Apertium where it has a route, else DeepL when a key is configured',
    ),
  provider: z.enum(['default']).default('default').describe('Dub pipeline (its steps take their own providers)'),
  ...common,
});
export type DubVideoBody = z.infer<typeof DubVideoBody>;

export const ANALYZE_TASKS = ['transcribe', 'scenes', 'embed'] as const;
export const AnalyzeVideoBody = z.strictObject({
  video_url: Url,
  provider: z.enum(ANALYSIS_PROVIDERS).default('default'),
  tasks: z
    .array(z.enum(ANALYZE_TASKS))
    .min(1)
    .max(3)
    .default(['transcribe', 'scenes'])
    .transform((t) => [...new Set(t)]),
  collectionId: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('With `embed`: also store the chunks in this collection'),
  ...common,
});
export type AnalyzeVideoBody = z.infer<typeof AnalyzeVideoBody>;

export const VideoJobParams = z.object({ jobId: z.string().min(1).max(100) });

export const VideoResult = z
  .object({
    video_url: z.string().optional(),
    duration_seconds: z.number(),
    width: z.int().optional(),
    height: z.int().optional(),
    provider: z.string(),
  })
  .catchall(z.unknown());
export type VideoResult = z.infer<typeof VideoResult>;

export const VideoJobError = z.object({ code: z.string(), message: z.string() });
export type VideoJobError = z.infer<typeof VideoJobError>;

/** The contract's Video job resource. */
export const VideoJob = z.object({
  id: z.string(),
  type: z.enum(VIDEO_JOB_TYPES),
  status: z.enum(VIDEO_JOB_STATUSES),
  provider: z.string(),
  progress: z.number(),
  result: VideoResult.optional(),
  error: VideoJobError.optional(),
  created_at: z.string(),
  completed_at: z.string().optional(),
  owner_id: z.string(),
});
export type VideoJob = z.infer<typeof VideoJob>;

/** Analyze result (documented in docs/video.md): the common fields plus one section per requested task. */
export interface AnalyzeSections {
  transcript?: { text: string; language: string; segments: { start: number; end: number; text: string }[] };
  scenes?: {
    start: number;
    end: number;
    description: string;
    ocr_text: string;
    face_count: number;
    motion: number;
    dominant_color: string;
  }[];
  embeddings?: {
    provider: string;
    dimensions: number;
    collection_id?: string;
    chunks: { start: number; end: number; text: string; embedding: number[] }[];
  };
}

/** One engine of a video job type, and whether this deployment can run it for the caller now. */
export const VideoEngine = z.object({
  id: z.string().describe('The `provider` value that selects it'),
  kind: z.enum(['local', 'self-hosted', 'commercial']),
  label: z.string(),
  available: z.boolean(),
  billing: z.enum(['credits', 'caller-key']).describe('credits: charged per generated second; caller-key: not charged'),
  configure: z.string().optional().describe('Present when unavailable: what makes it available'),
});
export type VideoEngine = z.infer<typeof VideoEngine>;
export const VideoEngineList = z.object({ data: z.array(VideoEngine) });
export type VideoEngineList = z.infer<typeof VideoEngineList>;

export const WebhookSecretQuery = z.object({ url: Url });
export const WebhookSecret = z.object({
  url: z.string(),
  secret: z.string().describe('whsec_… — verify with any Standard Webhooks library'),
  createdAt: z.string(),
  disabled: z.boolean(),
});
export type WebhookSecret = z.infer<typeof WebhookSecret>;
