import type { TtsEngine } from '../../shared/engines/tts/types.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import type { Infra } from '../../shared/platform/infra.ts';

/** Seconds a developer at the limit is told to wait: a long local synthesis runs about this long. */
export const LOCAL_SYNTHESES_RETRY_AFTER_S = 5;

/** Per platform (a test process runs several): developer → syntheses running on the local voices. */
const running = new WeakMap<Infra, Map<string, number>>();

/**
 * Takes one of the developer's places on the local voices (issue #35): an engine that needs no key runs on this
 * process's CPU, so one developer may run at most SPEECH_LOCAL_SYNTHESES_PER_DEVELOPER syntheses on it at once;
 * one more is 429 `local_syntheses_limited` with Retry-After, before anything is reserved or started. Without the
 * limit, one developer's back-to-back long syntheses kept every batch worker busy, and each more request queued
 * work another developer's request waited behind (the queue is fair, the CPU is not infinite). Vendor engines are
 * not limited here (their vendor limits them). Returns the release, to be called once the synthesis has ended;
 * calling it again does nothing.
 */
export function holdLocalSynthesis(infra: Infra, engine: TtsEngine, developerId: string): () => void {
  if (engine.capabilities.requiresKey) return () => {};
  let byDeveloper = running.get(infra);
  if (!byDeveloper) running.set(infra, (byDeveloper = new Map()));
  const limit = infra.config.SPEECH_LOCAL_SYNTHESES_PER_DEVELOPER;
  const now = byDeveloper.get(developerId) ?? 0;
  if (now >= limit) {
    throw new ApiError('local_syntheses_limited', { limit, retryAfter: LOCAL_SYNTHESES_RETRY_AFTER_S }, null, {
      'retry-after': String(LOCAL_SYNTHESES_RETRY_AFTER_S),
    });
  }
  byDeveloper.set(developerId, now + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (byDeveloper.get(developerId) ?? 1) - 1;
    if (left > 0) byDeveloper.set(developerId, left);
    else byDeveloper.delete(developerId);
  };
}
