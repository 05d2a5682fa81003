import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav } from '../../shared/kernel/audio/index.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { speak } from './helpers/speech.ts';

let p: TestPlatform;
let key: string;
let dir: string;
let wav: Buffer;
const tts = new LocalTtsEngine();

/** POST /v1/transcribe of the recording, multipart, with these fields (fast: the calls' decoder). */
function transcribe(fields: Record<string, string>): Promise<Response> {
  const fd = new FormData();
  for (const [k, v] of Object.entries({ mode: 'fast', ...fields })) fd.append(k, v);
  fd.append('file', new Blob([wav]), 'audio.wav');
  return p.request('/v1/transcribe', { method: 'POST', key, body: fd });
}

beforeAll(async () => {
  wav = encodeWav(await speak(tts, 'do you accept medicaid'), 16000);
  dir = await mkdtemp(join(tmpdir(), 'vap-lm-api-'));
  // The build is niced: on a loaded machine it took over the default 120 s limit (a 503 in a whole run at load 8).
  p = await startTestPlatform({ roles: ['api'], env: { SPEECH_LM_DIR: dir, SPEECH_LM_BUILD_TIMEOUT_MS: '600000' } });
  ({ apiKey: key } = await p.developer('pro'));
}, 120_000);

afterAll(async () => {
  await p?.close();
  tts.close();
  await rm(dir, { recursive: true, force: true });
});

describe('POST /v1/transcribe with prompt or keywords (the local engine biased to them)', () => {
  it('builds a model from the keywords and says so in X-Stt-Model', async () => {
    const res = await transcribe({ keywords: 'medicaid, medicare, copay' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-stt-model')).toBe("pocketsphinx, local, biased to this request's keywords");
    // What the biasing does to recognition is test/speech/language-model.test.ts's; this is the route's plumbing.
    expect(((await res.json()) as { text: string }).text.length).toBeGreaterThan(0);
  }, 240_000);

  it("takes OpenAI's prompt field too; without either the general model serves", async () => {
    const plain = await transcribe({});
    expect(plain.status).toBe(200);
    expect(plain.headers.get('x-stt-model')).toBe('pocketsphinx, local, general English model');
    const prompted = await transcribe({ prompt: 'Questions about Medicaid and Medicare coverage.' });
    expect(prompted.status).toBe(200);
    expect(prompted.headers.get('x-stt-model')).toBe("pocketsphinx, local, biased to this request's prompt");
  }, 240_000);

  it.each([
    ['too many keywords', { keywords: Array.from({ length: 101 }, (_, i) => `k${i}`).join(',') }],
    ['a keyword too long', { keywords: 'x'.repeat(51) }],
    ['a keyword with markup', { keywords: '<script>' }],
    ['a prompt too long', { prompt: 'word '.repeat(801) }],
  ])('refuses %s with 400 before any work', async (_name, fields) => {
    const res = await transcribe(fields);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string } };
    expect(body.error.code).toBe('validation_failed');
  });
});

describe('POST /v1/transcribe when the build runs out of time', () => {
  it('is a 503 to retry (over_capacity, Retry-After), not a missing feature', async () => {
    // A folder with no pruned general model: reading and pruning it alone takes seconds, past the 1 s limit.
    const own = await mkdtemp(join(tmpdir(), 'vap-lm-busy-'));
    const busy = await startTestPlatform({
      roles: ['api'],
      env: { SPEECH_LM_DIR: own, SPEECH_LM_BACKGROUND_DIR: own, SPEECH_LM_BUILD_TIMEOUT_MS: '1000' },
    });
    try {
      const { apiKey } = await busy.developer('pro');
      const fd = new FormData();
      fd.append('mode', 'fast');
      fd.append('keywords', 'medicaid, medicare');
      fd.append('file', new Blob([wav]), 'audio.wav');
      const res = await busy.request('/v1/transcribe', { method: 'POST', key: apiKey, body: fd });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('30');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('over_capacity');
    } finally {
      await busy.close();
      await rm(own, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('POST /v1/transcribe and long audio on the local engine', () => {
  it('refuses audio longer than the local engine can finish synchronously with a 413 that points to the async route', async () => {
    // SPEECH_SYNC_LOCAL_MAX_AUDIO_SECONDS is 300 by default: 301 s of quiet audio is refused before any decoding.
    const long = encodeWav(Buffer.alloc(301 * 16000 * 2), 16000);
    const fd = new FormData();
    fd.append('file', new Blob([long]), 'long.wav');
    const res = await p.request('/v1/transcribe', { method: 'POST', key, body: fd });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: { code: string; message: string; param: string } };
    expect(body.error.code).toBe('payload_too_large');
    expect(body.error.message).toContain('/v1/transcribe/async');
    expect(body.error.message).toContain('300 seconds');
  }, 60_000);
});
