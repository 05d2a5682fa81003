import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { nodeCapacity } from '../../shared/domains/realtime/admission.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';

/** Admission's default capacity when phone calls are heard by the local streaming recogniser (issue 32). */
const capacity = (env: Record<string, string>) =>
  nodeCapacity(
    loadConfig({
      ...process.env,
      PROCESSES: '1',
      REALTIME_MAX_SESSIONS: '0',
      REALTIME_CALLS_PER_CORE: '25',
      DEEPGRAM_API_KEY: '',
      ...env,
    }),
  );

describe('realtime capacity with the local live STT', () => {
  const cores = availableParallelism();

  it('a phone line heard locally holds fewer calls a core: chosen, or no platform key for the phone STT', () => {
    // The default (16: the decoder's measured CPU, docs/admission.md) unless the operator sets another.
    expect(capacity({ REALTIME_PHONE_STT_PROVIDER: 'default' })).toBe(16 * cores);
    expect(capacity({ REALTIME_PHONE_STT_PROVIDER: 'deepgram' })).toBe(16 * cores);
    expect(capacity({ REALTIME_PHONE_STT_PROVIDER: 'default', REALTIME_LOCAL_STT_CALLS_PER_CORE: '9' })).toBe(
      9 * cores,
    );
  });

  it('a vendor phone STT with a platform key, or no local fallback, keeps the usual figure; a set maximum wins', () => {
    expect(capacity({ REALTIME_PHONE_STT_PROVIDER: 'deepgram', DEEPGRAM_API_KEY: 'dg-key' })).toBe(25 * cores);
    expect(capacity({ REALTIME_PHONE_STT_LOCAL_FALLBACK: 'false' })).toBe(25 * cores);
    expect(capacity({ REALTIME_PHONE_STT_PROVIDER: 'default', REALTIME_MAX_SESSIONS: '40' })).toBe(40);
  });
});
