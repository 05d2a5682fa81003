import type { VideoErrorCode } from '../../contracts/video.ts';
import { isApiError } from '../../kernel/errors/api-error.ts';
import { isEngineError } from '../../kernel/errors/engine-error.ts';
import { isToolFailure, type ToolFailureKind } from '../../kernel/media/tool-failure.ts';

/**
 * Why a video job failed, in the contract's terms: `error.code` of the job. Carries its retry policy so the
 * worker can tell "try again" (network, 5xx, engine briefly down) from "this input will never work".
 */
export class VideoFailure extends Error {
  override name = 'VideoFailure';
  constructor(
    readonly code: VideoErrorCode,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
  }
}

export function isVideoFailure(e: unknown): e is VideoFailure {
  return e instanceof VideoFailure || (e instanceof Error && e.name === 'VideoFailure' && 'code' in e);
}

/** A media tool's failure (the kernel's ffmpeg helpers) as the job reports it. */
const TOOL_FAILURE_CODES: Record<ToolFailureKind, VideoErrorCode> = {
  unreadable: 'input_unreadable',
  unavailable: 'engine_unavailable',
  failed: 'internal_error',
};

/** Maps anything a step threw to the job's error object. */
export function toVideoFailure(e: unknown, aborted: boolean): VideoFailure {
  if (isVideoFailure(e)) return e;
  if (isToolFailure(e)) return new VideoFailure(TOOL_FAILURE_CODES[e.kind], e.message, e.retryable);
  if (aborted) return new VideoFailure('provider_timeout', 'The job ran past its time limit.', false);
  if (isApiError(e)) {
    if (e.code === 'payload_too_large') return new VideoFailure('input_too_large', e.message);
    if (e.code === 'url_not_allowed' || e.code === 'invalid_url' || e.code === 'url_fetch_failed')
      return new VideoFailure('input_unreadable', e.message, e.code === 'url_fetch_failed');
    if (e.code === 'provider_unavailable') return new VideoFailure('engine_unavailable', e.message);
    if (e.code === 'unsupported_language') return new VideoFailure('unsupported_language', e.message);
    if (e.code === 'invalid_audio') return new VideoFailure('input_unreadable', e.message);
    // A vendor engine's failure as the speech domain reports it (engineToApiError keeps its retryability).
    if (e.code === 'upstream_timeout') return new VideoFailure('provider_timeout', e.message, e.retryable ?? true);
    if (e.code === 'upstream_error') return new VideoFailure('provider_error', e.message, e.retryable ?? true);
    return new VideoFailure('internal_error', e.message);
  }
  if (isEngineError(e)) {
    if (e.kind === 'invalid_input') {
      if (e.problem === 'no_face') return new VideoFailure('no_face_detected', e.message);
      if (e.problem === 'unreadable') return new VideoFailure('input_unreadable', e.message);
      if (e.problem === 'unsupported_language') return new VideoFailure('unsupported_language', e.message);
      return new VideoFailure('internal_error', e.message);
    }
    if (e.kind === 'not_configured') return new VideoFailure('engine_unavailable', e.message);
    if (e.kind === 'timeout') return new VideoFailure('provider_timeout', e.message, e.retryable);
    if (e.kind === 'unavailable') return new VideoFailure('engine_unavailable', e.message, e.retryable);
    return new VideoFailure('provider_error', e.message, e.retryable);
  }
  const err = e as Error;
  if (err?.name === 'AbortError' || err?.name === 'TimeoutError')
    return new VideoFailure('provider_timeout', 'The job ran past its time limit.', false);
  return new VideoFailure('internal_error', 'The job failed unexpectedly; retry, and report the job id.', true);
}
