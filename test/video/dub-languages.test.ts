import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VideoJob } from '../../shared/contracts/video.ts';
import { ApertiumTranslateEngine } from '../../shared/engines/translate/apertium.ts';
import { DeepLTranslateEngine } from '../../shared/engines/translate/deepl.ts';
import { startDeepgramDouble } from '../../support/doubles/deepgram.ts';
import { startDeepLDouble } from '../../support/doubles/deepl.ts';
import type { HttpDouble } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { startMediaServer, type LocalServer } from '../../support/doubles/media-server.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { TEST_ENV, waitForJob } from './helpers.ts';

/**
 * Dubbing in any language the chosen STT knows (issue 23, the contract's `source_language`): detected by a vendor
 * STT when omitted (the Deepgram double hears Spanish and says so, as Deepgram does with detect_language), refused
 * with what to configure on the English-only local recogniser, and translated by the real Apertium, pivoting
 * where no pair joins the two languages.
 */
const SPANISH = 'El perro come la comida. La casa es grande.';

let p: TestPlatform;
let media: LocalServer;
let deepgram: HttpDouble;
let deepl: HttpDouble;
let key: string;

beforeAll(async () => {
  [deepgram, deepl] = await Promise.all([startDeepgramDouble({ language: 'es', text: SPANISH }), startDeepLDouble()]);
  [p, media] = await Promise.all([
    startTestPlatform({
      env: {
        ...TEST_ENV,
        DEEPGRAM_BASE_URL: deepgram.url,
        DEEPGRAM_API_KEY: deepgram.key,
        DEEPL_BASE_URL: deepl.url,
        DEEPL_API_KEY: deepl.key,
      },
    }),
    startMediaServer(),
  ]);
  key = (await p.developer('pro')).apiKey;
});
afterAll(async () => {
  await p?.close();
  await media?.close();
  await deepgram?.close();
  await deepl?.close();
});

async function dub(json: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return p.request('/v1/video/dub', {
    method: 'POST',
    key,
    headers,
    json: { video_url: `${media.url}/speaker.mp4`, ...json },
  });
}

describe('Apertium routes (real apertium)', () => {
  const engine = new ApertiumTranslateEngine();

  it('uses an installed pair directly and pivots where none joins the two languages', async () => {
    expect(engine.route('es', 'en')!.map((h) => h.mode)).toEqual(['spa-eng']);
    expect(engine.route('es', 'eo')!.map((h) => `${h.source}-${h.target}`)).toEqual(['es-en', 'en-eo']);
    expect(engine.route('eo', 'es')!.map((h) => `${h.source}-${h.target}`)).toEqual(['eo-en', 'en-es']);
    expect(engine.route('ja', 'es')).toBeNull();
    expect(engine.pairs()).toEqual(expect.arrayContaining(['en-es', 'es-en', 'en-eo', 'eo-en']));
    const [eo] = await engine.translate({ texts: ['El perro come.'], source: 'es', target: 'eo' });
    expect(eo).toMatch(/hundo/i);
  });
});

describe('DeepL adapter (against the DeepL double)', () => {
  it("sends DeepL's codes (a regional English target, an upper-case source) and keeps the texts' order", async () => {
    const engine = new DeepLTranslateEngine({ baseUrl: deepl.url });
    const out = await engine.translate({ texts: ['uno', 'dos'], source: 'es', target: 'en', apiKey: deepl.key });
    expect(deepl.json()).toMatchObject({ text: ['uno', 'dos'], source_lang: 'ES', target_lang: 'EN-US' });
    expect(out).toEqual(['[EN-US] uno', '[EN-US] dos']);
    await expect(engine.translate({ texts: ['x'], source: 'es', target: 'en', apiKey: 'wrong' })).rejects.toMatchObject(
      {
        kind: 'auth',
      },
    );
  });
});

describe('POST /v1/video/dub languages', () => {
  it('refuses a non-English source on the local recogniser, saying what to configure', async () => {
    const res = await dub({ source_language: 'es', target_language: 'en' });
    const body = (await res.json()) as { error: { code: string; param: string; message: string } };
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({ code: 'unsupported_language', param: 'source_language' });
    expect(body.error.message).toMatch(/English only/);
    expect(body.error.message).toMatch(/stt_provider/);
  });

  it('refuses a target no installed pair reaches (Apertium only), naming the pairs there are', async () => {
    const res = await dub({ target_language: 'ja', stt_provider: 'deepgram', translate_provider: 'default' });
    const body = (await res.json()) as { error: { code: string; param: string; message: string } };
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({ code: 'unsupported_language', param: 'target_language' });
    expect(body.error.message).toMatch(/en-es/);
    expect(body.error.message).toMatch(/DeepL/);
  });

  it('detects the source language with a vendor STT and translates through a pivot (es → en → eo)', async () => {
    const res = await dub({ target_language: 'eo', stt_provider: 'deepgram' });
    const sub = (await res.json()) as VideoJob;
    expect(res.status, JSON.stringify(sub)).toBe(202);
    const { job } = await waitForJob(p, key, sub.id, 120_000);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    const listen = deepgram.requests.filter((r) => r.path === '/v1/listen');
    expect(listen).toHaveLength(1);
    expect(listen[0]!.query.get('detect_language')).toBe('true');
    expect(listen[0]!.query.get('language')).toBeNull();
    const result = job.result as unknown as {
      source_language: string;
      target_language: string;
      segments: { text: string }[];
    };
    expect(result.source_language).toBe('es');
    expect(result.target_language).toBe('eo');
    const text = result.segments.map((s) => s.text).join(' ');
    expect(text).toMatch(/hundo/i);
    expect(text).not.toMatch(/perro/i);
  });

  it('translates through DeepL where Apertium has no route and a DeepL key is configured (auto)', async () => {
    const res = await dub({ target_language: 'de', stt_provider: 'deepgram' });
    const sub = (await res.json()) as VideoJob;
    expect(res.status, JSON.stringify(sub)).toBe(202);
    const { job } = await waitForJob(p, key, sub.id, 120_000);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    const call = deepl.json(deepl.requests.filter((r) => r.path === '/v2/translate').at(-1));
    expect(call).toMatchObject({ source_lang: 'ES', target_lang: 'DE' });
    expect(call.text).toEqual(expect.arrayContaining([expect.stringMatching(/perro/i)]));
    const result = job.result as unknown as { source_language: string; segments: { text: string }[] };
    expect(result.source_language).toBe('es');
    expect(result.segments.every((s) => s.text.startsWith('[DE] '))).toBe(true);
  });

  it("transcribes on the caller's own STT key when the request sends one (sealed with the job)", async () => {
    const platformKey = deepgram.key;
    deepgram.key = 'caller-deepgram-key'; // the double now refuses the platform key
    try {
      const res = await dub(
        { target_language: 'en', stt_provider: 'deepgram' },
        { 'X-Provider-Key-Deepgram': 'caller-deepgram-key' },
      );
      const sub = (await res.json()) as VideoJob;
      expect(res.status, JSON.stringify(sub)).toBe(202);
      const { job } = await waitForJob(p, key, sub.id, 120_000);
      expect(job.status, JSON.stringify(job.error)).toBe('completed');
      const listen = deepgram.requests.filter((r) => r.path === '/v1/listen').at(-1)!;
      expect(listen.headers.authorization).toBe('Token caller-deepgram-key');
      const text = (job.result as unknown as { segments: { text: string }[] }).segments.map((x) => x.text).join(' ');
      expect(text).toMatch(/dog/i);
    } finally {
      deepgram.key = platformKey;
    }
  });
});
