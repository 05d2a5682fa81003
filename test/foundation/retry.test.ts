import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { EngineError, engineToApiError } from '../../shared/kernel/errors/engine-error.ts';
import { toVideoFailure } from '../../shared/domains/video/failure.ts';
import { ToolFailure } from '../../shared/kernel/media/tool-failure.ts';
import {
  isRetryable,
  isTransientDependencyError,
  PermanentError,
  RetryableError,
} from '../../shared/kernel/errors/retry.ts';

/** An error as BullMQ hands it back from another process: a plain object with the class's name. */
function crossed(e: Error & Record<string, unknown>): Error {
  return Object.assign(new Error(e.message), { ...e, name: e.name });
}

describe('retry classification (one answer for every job kind)', () => {
  it('regression: a 4xx ApiError escaping a job handler was retried until attempts ran out', () => {
    expect(isRetryable(ApiError.validation('bad'))).toBe(false);
    expect(isRetryable(new ApiError('insufficient_credits', { needed: 1, remaining: 0 }))).toBe(false);
    expect(isRetryable(crossed(ApiError.validation('bad') as never))).toBe(false);
  });

  it('an EngineError keeps its upstream answer: 4xx permanent except 408/429, 5xx and network retryable', () => {
    for (const [status, want] of [
      [400, false],
      [401, false],
      [404, false],
      [408, true],
      [429, true],
      [500, true],
      [503, true],
    ] as const) {
      const e = EngineError.fromStatus('vendor', status, 'x');
      expect(e.status).toBe(status);
      expect(isRetryable(e), `HTTP ${status}`).toBe(want);
      expect(isRetryable(crossed(e as never)), `HTTP ${status} across processes`).toBe(want);
      // Mapped for the envelope, the API error keeps the engine's policy.
      expect(isRetryable(engineToApiError(e, 'vendor'))).toBe(want);
    }
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(isRetryable(EngineError.network('vendor', refused))).toBe(true);
    // A vendor's network failure is the engine's, not the platform's dependency.
    expect(isTransientDependencyError(EngineError.network('vendor', refused))).toBe(false);
  });

  it("an abortable wait ended by a deadline is the engine's timeout; ended by the caller, an abort", async () => {
    const { setTimeout: sleep } = await import('node:timers/promises');
    const deadline = AbortSignal.abort(new DOMException('deadline', 'TimeoutError'));
    const timedOut = await sleep(60_000, undefined, { signal: deadline }).catch((e: unknown) => e);
    expect(EngineError.network('vendor', timedOut)).toMatchObject({ kind: 'timeout', retryable: true });
    const cancelled = await sleep(60_000, undefined, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(EngineError.network('vendor', cancelled)).toMatchObject({ kind: 'aborted', retryable: false });
  });

  it("an engine's refusal of the input is permanent and keeps its code at each boundary (API and video job)", () => {
    const language = EngineError.invalidInput('default', 'unsupported_language', 'English only', 'language');
    const voice = EngineError.invalidInput('default', 'invalid', 'unknown voice', 'voiceId');
    const face = EngineError.invalidInput('default', 'no_face', 'No face was found in video_url.', 'video_url');
    const missing = EngineError.notConfigured('nope', 'no tts engine "nope" is configured here; available: default');
    for (const e of [language, voice, face, missing]) {
      expect(isRetryable(e)).toBe(false);
      expect(isRetryable(crossed(e as never))).toBe(false);
    }
    expect(engineToApiError(crossed(language as never))).toMatchObject({
      status: 400,
      code: 'unsupported_language',
      param: 'language',
      message: 'English only',
    });
    expect(engineToApiError(voice)).toMatchObject({ status: 400, code: 'validation_failed', param: 'voiceId' });
    expect(engineToApiError(missing)).toMatchObject({
      status: 400,
      code: 'provider_unavailable',
      param: 'provider',
      message: 'Provider "nope" is not available: no tts engine "nope" is configured here; available: default',
    });
    expect(toVideoFailure(crossed(face as never), false)).toMatchObject({ code: 'no_face_detected', retryable: false });
    expect(toVideoFailure(EngineError.invalidInput('default', 'unreadable', 'empty'), false).code).toBe(
      'input_unreadable',
    );
    expect(toVideoFailure(missing, false)).toMatchObject({ code: 'engine_unavailable', retryable: false });
  });

  it("a media tool's neutral failure becomes the video job's code, with its retry policy, also across a process", () => {
    const cases = [
      [new ToolFailure('unreadable', 'The media could not be read.'), 'input_unreadable', false],
      [new ToolFailure('unavailable', 'ffmpeg: spawn ENOENT'), 'engine_unavailable', true],
      [new ToolFailure('failed', 'encoder failed: x'), 'internal_error', true],
    ] as const;
    for (const [e, code, retryable] of cases) {
      expect(toVideoFailure(e, false)).toMatchObject({ code, retryable, message: e.message });
      expect(toVideoFailure(crossed(e as never), false)).toMatchObject({ code, retryable });
    }
  });

  it('Postgres, Redis and S3 outages are transient dependency failures', () => {
    const cases: unknown[] = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      new Error('Connection is closed.'),
      Object.assign(new Error('InternalError'), { name: 'InternalError', $metadata: { httpStatusCode: 503 } }),
      new TypeError('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }),
      new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], 'connect failed'),
      new ApiError('dependency_unavailable', { dependency: 'Stripe' }),
    ];
    for (const e of cases) {
      expect(isTransientDependencyError(e), String(e)).toBe(true);
      expect(isRetryable(e)).toBe(true);
    }
    expect(isTransientDependencyError(Object.assign(new Error('dup'), { code: '23505' }))).toBe(false);
    expect(isTransientDependencyError(ApiError.validation('x'))).toBe(false);
  });

  it('explicit policies are believed; aborts are not retried; unknown failures are', () => {
    expect(isRetryable(new RetryableError('x'))).toBe(true);
    expect(isRetryable(new PermanentError('x'))).toBe(false);
    expect(isRetryable(Object.assign(new Error('aborted'), { name: 'AbortError' }))).toBe(false);
    expect(isRetryable(new Error('bug'))).toBe(true);
  });
});
