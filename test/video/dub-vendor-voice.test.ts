import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startElevenLabsDouble } from '../../support/doubles/elevenlabs.ts';
import type { HttpDouble } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { startMediaServer, type LocalServer } from '../../support/doubles/media-server.ts';
import { startOpenAiDouble } from '../../support/doubles/openai.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { TEST_ENV, waitForJob } from './helpers.ts';

/**
 * Issue 34: a dub without `voice_id` speaks "a multilingual voice on the same provider" (the contract). The voice
 * was `espeak-<lang>` whatever `tts_provider` said, so a vendor was asked for a voice it does not have. Now the
 * named vendor gets its own multilingual voice: ElevenLabs its default voice on eleven_multilingual_v2, OpenAI
 * its default voice (every OpenAI voice speaks the text's language).
 */
let p: TestPlatform;
let media: LocalServer;
let elevenlabs: HttpDouble;
let openai: HttpDouble;
let key: string;

beforeAll(async () => {
  [elevenlabs, openai, media] = await Promise.all([startElevenLabsDouble(), startOpenAiDouble(), startMediaServer()]);
  p = await startTestPlatform({
    env: {
      ...TEST_ENV,
      ELEVENLABS_BASE_URL: elevenlabs.url,
      ELEVENLABS_API_KEY: elevenlabs.key,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      OPENAI_API_KEY: openai.key,
    },
  });
  key = (await p.developer('pro')).apiKey;
});
afterAll(async () => {
  await p?.close();
  await Promise.all([media?.close(), elevenlabs?.close(), openai?.close()]);
});

async function dubTo(ttsProvider: string): Promise<void> {
  const res = await p.request('/v1/video/dub', {
    method: 'POST',
    key,
    json: { video_url: `${media.url}/speaker.mp4`, target_language: 'es', tts_provider: ttsProvider },
  });
  const body = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(body)).toBe(202);
  const { job } = await waitForJob(p, key, body.id, 180_000);
  expect(job.status, JSON.stringify(job.error)).toBe('completed');
}

describe('POST /v1/video/dub without voice_id, on a vendor TTS', () => {
  it('ElevenLabs: the default voice on the multilingual model, with the target language', async () => {
    await dubTo('elevenlabs');
    const tts = elevenlabs.requests.filter((r) => r.path.startsWith('/v1/text-to-speech/'));
    expect(tts.length).toBeGreaterThan(0);
    for (const r of tts) {
      expect(r.path).toBe('/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream');
      expect(elevenlabs.json(r)).toMatchObject({ model_id: 'eleven_multilingual_v2', language_code: 'es' });
    }
  });

  it('OpenAI: its default voice, never an espeak voice name', async () => {
    await dubTo('openai');
    const tts = openai.requests.filter((r) => r.path === '/v1/audio/speech');
    expect(tts.length).toBeGreaterThan(0);
    for (const r of tts) expect(openai.json(r)).toMatchObject({ voice: 'alloy', model: 'gpt-4o-mini-tts' });
  });
});
