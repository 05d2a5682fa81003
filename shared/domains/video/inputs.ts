import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../../kernel/errors/api-error.ts';
import { formatBytes, safeFetch } from '../../kernel/net/safe-fetch.ts';
import type { Infra } from '../../platform/infra.ts';
import { objectKey } from '../../kernel/storage/keys.ts';
import { VideoFailure } from './failure.ts';
import { probeMedia, type MediaInfo } from '../../kernel/media/probe.ts';

export type InputKind = 'image' | 'audio' | 'video';

/** The documented input limits (docs/video.md), from config. */
export interface InputLimits {
  maxBytes: number;
  maxSeconds: number;
  maxPixels: number;
}

export function inputLimits(infra: Infra): InputLimits {
  const c = infra.config;
  return {
    maxBytes: c.VIDEO_MAX_INPUT_BYTES,
    maxSeconds: c.VIDEO_MAX_INPUT_SECONDS,
    maxPixels: c.VIDEO_MAX_INPUT_PIXELS,
  };
}

/**
 * Brings one input of a job into S3 (video-inputs/<job>/<param>) and into the job's work folder: fetched
 * SSRF-safely (the address checked at connect time, every redirect too), size-bounded while streaming, then
 * probed and checked against the limits. A retry finds the object in S3 and skips the fetch.
 */
export async function fetchInput(
  infra: Infra,
  job: { id: string; owner_id: string },
  param: string,
  url: string,
  kind: InputKind,
  workDir: string,
  signal: AbortSignal,
): Promise<{ key: string; path: string; info: MediaInfo }> {
  const limits = inputLimits(infra);
  const key = objectKey(job.owner_id, 'video-inputs', job.id, param);
  const path = `${workDir}/${param}`;
  if (await infra.storage.exists(key)) {
    const { body } = await infra.storage.getStream(key);
    await pipeline(body, createWriteStream(path), { signal });
  } else {
    try {
      const res = await safeFetch(url, {
        policy: infra.addressPolicy,
        maxBytes: limits.maxBytes,
        timeoutMs: Math.max(infra.config.OUTBOUND_TIMEOUT_MS, 60_000),
        signal,
        param,
      });
      if (res.status < 200 || res.status >= 300) {
        res.body.resume();
        throw new VideoFailure('input_unreadable', `Fetching ${param} answered HTTP ${res.status}.`, res.status >= 500);
      }
      await pipeline(res.body, createWriteStream(path), { signal });
    } catch (e) {
      if (e instanceof ApiError && e.code === 'payload_too_large') {
        throw new VideoFailure('input_too_large', `${param} is larger than ${formatBytes(limits.maxBytes)}.`);
      }
      if (e instanceof ApiError) throw new VideoFailure('input_unreadable', e.message, e.code === 'url_fetch_failed');
      throw e;
    }
  }
  const info = await probeMedia(path, signal);
  checkInput(info, kind, param, limits);
  if (!(await infra.storage.exists(key))) await infra.storage.putFile(key, path, undefined, signal);
  return { key, path, info };
}

export function checkInput(info: MediaInfo, kind: InputKind, param: string, limits: InputLimits): void {
  if (kind === 'image') {
    const codec = info.video?.codec ?? '';
    if (!['mjpeg', 'png', 'jpeg'].includes(codec)) {
      throw new VideoFailure('input_unreadable', `${param} must be a JPG or PNG image (got ${codec || info.format}).`);
    }
  }
  if (kind === 'video' && !info.video) throw new VideoFailure('input_unreadable', `${param} holds no video stream.`);
  if (kind === 'audio' && !info.audio) throw new VideoFailure('input_unreadable', `${param} holds no audio stream.`);
  if (info.video && info.video.width * info.video.height > limits.maxPixels) {
    throw new VideoFailure(
      'input_too_large',
      `${param} is ${info.video.width}×${info.video.height}; the limit is ${limits.maxPixels} pixels (e.g. 1920×1080).`,
    );
  }
  if (kind !== 'image' && info.durationSeconds > limits.maxSeconds) {
    throw new VideoFailure(
      'input_too_large',
      `${param} lasts ${Math.round(info.durationSeconds)} s; the limit is ${limits.maxSeconds} s.`,
    );
  }
  if (kind !== 'image' && !(info.durationSeconds > 0)) {
    throw new VideoFailure('input_unreadable', `${param} has no measurable duration.`);
  }
}
