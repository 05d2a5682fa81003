import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tone, wav } from '../../../support/doubles/audio.ts';
import { startDeepgramDouble } from '../../../support/doubles/deepgram.ts';
import { startElevenLabsDouble } from '../../../support/doubles/elevenlabs.ts';
import type { HttpDouble } from '../../../shared/domains/agent-tests/simulators/http-double.ts';
import { SCRIPT } from '../../../shared/domains/agent-tests/simulators/transcript.ts';
import { startTestPlatform, type TestPlatform } from '../../../support/helpers/platform.ts';

/**
 * The vendor adapters behind the real API: `<VENDOR>_BASE_URL` points the platform at the doubles, the caller's
 * `X-Provider-Key-<Name>` header or the platform key reaches the vendor, and vendor failures surface as the API's
 * error envelope.
 */
let p: TestPlatform;
let key: string;
let eleven: HttpDouble;
let deepgram: HttpDouble;

beforeAll(async () => {
  eleven = await startElevenLabsDouble();
  deepgram = await startDeepgramDouble();
  p = await startTestPlatform({
    roles: ['api'],
    env: {
      ELEVENLABS_BASE_URL: eleven.url,
      DEEPGRAM_BASE_URL: deepgram.url,
      DEEPGRAM_API_KEY: deepgram.key,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
    },
  });
  key = (await p.developer('pro')).apiKey;
});
afterAll(async () => {
  await p?.close();
  await eleven?.close();
  await deepgram?.close();
});

describe('vendor adapters through the API', () => {
  it('POST /v1/synthesize with provider elevenlabs sends the caller header key and streams WAV back unmetered', async () => {
    const res = await p.request('/v1/synthesize', {
      method: 'POST',
      key,
      headers: { 'X-Provider-Key-ElevenLabs': eleven.key },
      json: { text: 'Hello through the platform.', provider: 'elevenlabs', format: 'wav' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^audio\/(wav|x-wav)/);
    expect(res.headers.get('x-provider-used')).toBe('elevenlabs');
    expect(res.headers.get('x-usage-bypassed')).toBe('true');
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.toString('ascii', 0, 4)).toBe('RIFF');
    expect(body.length).toBeGreaterThan(1000);
    expect(eleven.last().headers['xi-api-key']).toBe(eleven.key);
    expect(eleven.json()).toMatchObject({ text: 'Hello through the platform.' });
  });

  it('a key the vendor rejects is a 400 naming the provider; a vendor 503 is a 502', async () => {
    const rejected = await p.request('/v1/synthesize', {
      method: 'POST',
      key,
      headers: { 'X-Provider-Key-ElevenLabs': 'not-the-key' },
      json: { text: 'Hello.', provider: 'elevenlabs' },
    });
    expect(rejected.status).toBe(400);
    expect(((await rejected.json()) as { error: { code: string } }).error.code).toBe('provider_unavailable');
    const clear = eleven.failUntilCleared(503);
    const down = await p.request('/v1/synthesize', {
      method: 'POST',
      key,
      headers: { 'X-Provider-Key-ElevenLabs': eleven.key },
      json: { text: 'Hello.', provider: 'elevenlabs' },
    });
    clear();
    expect(down.status).toBe(502);
    expect(((await down.json()) as { error: { code: string } }).error.code).toBe('upstream_error');
  });

  it('POST /v1/transcribe with provider deepgram uses the platform key and returns the contract result', async () => {
    const fd = new FormData();
    fd.append('provider', 'deepgram');
    fd.append('timestamps', 'word');
    fd.append('language', 'en');
    fd.append('file', new Blob([wav(tone(16000, 2), 16000)]), 'a.wav');
    const res = await p.request('/v1/transcribe', { method: 'POST', key, body: fd });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-provider-used')).toBe('deepgram');
    expect(res.headers.get('x-usage-bypassed')).toBe('false');
    const out = (await res.json()) as { text: string; words: unknown[]; duration: number; language: string };
    expect(out.text).toBe(SCRIPT);
    expect(out.words).toHaveLength(SCRIPT.split(' ').length);
    expect(out.duration).toBeCloseTo(2, 1);
    expect(deepgram.last().headers.authorization).toBe(`Token ${deepgram.key}`);
  });
});
