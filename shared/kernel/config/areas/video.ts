import { z } from 'zod';
import { envInt } from '../env.ts';

/** Environment variables of the video area (merged into EnvSchema; documented in docs/video.md). */
export const videoEnv = {
  VIDEO_MAX_INPUT_BYTES: envInt(1, 2_000_000_000)
    .default(100 * 1024 * 1024)
    .describe('Largest video/audio/image input fetched from a URL (bytes); larger inputs fail with input_too_large'),
  VIDEO_MAX_INPUT_SECONDS: envInt(1, 7200)
    .default(300)
    .describe('Longest video or audio input (seconds); longer inputs fail with input_too_large'),
  VIDEO_MAX_INPUT_PIXELS: envInt(1, 100_000_000)
    .default(1920 * 1080)
    .describe('Largest input resolution (width × height); larger inputs fail with input_too_large'),
  VIDEO_AVATAR_SIZE: envInt(128, 1920)
    .default(512)
    .describe('Longest side of default-engine avatar and lip-sync output (pixels)'),
  VIDEO_FPS: envInt(8, 60).default(25).describe('Frame rate of default-engine avatar and lip-sync output'),
  VIDEO_LIPSYNC_KEYFRAME_EVERY: envInt(1, 50)
    .default(5)
    .describe('Default lip-sync: face landmarks are detected on every Nth frame and interpolated between'),
  VIDEO_URL_TTL_SECONDS: envInt(60, 7 * 86400)
    .default(24 * 3600)
    .describe('Lifetime of the presigned result.video_url'),
  VIDEO_GPU_CONCURRENCY: z
    .string()
    .regex(/^$|^[a-z]+:\d+(,[a-z]+:\d+)*$/)
    .default('')
    .describe(
      'Per-pool concurrency of a GPU worker process, e.g. "avatar:2,lipsync:1"; unset pools run 1 job at a time',
    ),
  VIDEO_MODEL_SERVERS: z
    .string()
    .default('')
    .describe(
      'Self-hosted neural engines behind the model-server contract: "kind:provider=url,…", e.g. ' +
        '"avatar:sadtalker=http://gpu-1:9000,lipsync:wav2lip=http://gpu-2:9000"',
    ),
  VIDEO_VENDOR_POLL_MS: envInt(10, 600_000)
    .default(5000)
    .describe('How often commercial video vendors (HeyGen, Sync Labs, Luma) are polled for a finished job'),
  WEBHOOK_RETRY_SCALE: z.coerce
    .number()
    .min(0.00001)
    .max(1)
    .default(1)
    .describe('Multiplies the webhook retry schedule (5 s, 5 min, 30 min, 2 h, …); tests use a small value'),
  WEBHOOK_TIMEOUT_MS: envInt(100, 60_000).default(10_000).describe('Timeout of one webhook delivery attempt'),
} satisfies z.ZodRawShape;
