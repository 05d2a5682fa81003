import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav, parseWav, sniffMedia } from '../../shared/kernel/audio/index.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { objectKey } from '../../shared/kernel/storage/keys.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { ROUND_TRIP_SENTENCES, speak, wordErrors, words } from './helpers/speech.ts';

let p: TestPlatform;
let key: string;
let developerId: string;
let otherKey: string;
let files: Server;
let filesUrl: string;
let helloWav: Buffer;

const tts = new LocalTtsEngine();

function form(file: Buffer | null, fields: Record<string, string> = {}, filename = 'audio.wav'): FormData {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  if (file) fd.append('file', new Blob([file]), filename);
  return fd;
}

beforeAll(async () => {
  helloWav = encodeWav(await speak(tts, 'please call me back when you get home tonight'), 16000);
  files = createServer((req, res) => {
    if (req.url === '/hello.wav') return res.writeHead(200, { 'content-type': 'audio/wav' }).end(helloWav);
    if (req.url === '/page.html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>');
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  p = await startTestPlatform({ roles: ['api', 'cpu'], env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  ({ apiKey: key, developerId } = await p.developer('pro'));
  otherKey = (await p.developer('pro')).apiKey;
});

afterAll(async () => {
  await p?.close();
  files?.close();
});

describe('POST /v1/synthesize', () => {
  it.each([
    ['wav', 'audio/wav'],
    ['mp3', 'audio/mpeg'],
    ['ogg', 'audio/ogg'],
  ])('streams %s with Content-Type %s and X-Provider-Used', async (format, type) => {
    const res = await p.request('/v1/synthesize', {
      method: 'POST',
      key,
      json: { text: 'Hello from the platform.', format },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(res.headers.get('x-provider-used')).toBe('default');
    expect(res.headers.get('x-usage-bypassed')).toBe('false');
    const body = Buffer.from(await res.arrayBuffer());
    expect(sniffMedia(body)).toBe('media');
    if (format === 'wav') expect(parseWav(body).data.length).toBeGreaterThan(16000);
  });

  it('defaults to wav and honours voiceId, speed and pitch', async () => {
    const slow = await p.request('/v1/synthesize', {
      method: 'POST',
      key,
      json: { text: 'Testing the speed.', voiceId: 'flite-slt', speed: 0.5 },
    });
    const fast = await p.request('/v1/synthesize', {
      method: 'POST',
      key,
      json: { text: 'Testing the speed.', voiceId: 'flite-slt', speed: 2 },
    });
    expect(slow.headers.get('content-type')).toBe('audio/wav');
    const a = parseWav(Buffer.from(await slow.arrayBuffer())).data.length;
    const b = parseWav(Buffer.from(await fast.arrayBuffer())).data.length;
    expect(a / b).toBeGreaterThan(2.5);
  });

  it.each([
    [{ text: '' }, 'text'],
    [{ text: 'x'.repeat(10_001) }, 'text'],
    [{ text: 'hi', speed: 2.5 }, 'speed'],
    [{ text: 'hi', pitch: 0.4 }, 'pitch'],
    [{ text: 'hi', format: 'flac' }, 'format'],
    [{ text: 'hi', provider: 'nobody' }, 'provider'],
    [{ text: 'hi', voiceId: 'no-such-voice' }, 'voiceId'],
  ])('400 for %j', async (json, param) => {
    const res = await p.request('/v1/synthesize', { method: 'POST', key, json });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { param: string; type: string } };
    expect(body.error.param).toBe(param);
  });

  it('400 provider_unavailable for a vendor with no key configured', async () => {
    const res = await p.request('/v1/synthesize', { method: 'POST', key, json: { text: 'hi', provider: 'cartesia' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('provider_unavailable');
  });

  it('needs an API key', async () => {
    const res = await p.request('/v1/synthesize', { method: 'POST', json: { text: 'hi' } });
    expect(res.status).toBe(401);
  });
});

describe('metering', () => {
  it('charges characters for TTS and audio seconds for STT on the local engines', async () => {
    const dev = await p.developer('pro');
    const usage = async () =>
      (await (await p.request('/v1/usage', { key: dev.apiKey })).json()) as { breakdown: { tts: number; stt: number } };
    const before = await usage();
    const text = 'Metering counts characters.';
    const audio = await p.request('/v1/synthesize', { method: 'POST', key: dev.apiKey, json: { text } });
    expect(audio.status).toBe(200);
    await audio.arrayBuffer();
    await p.request('/v1/transcribe', { method: 'POST', key: dev.apiKey, body: form(helloWav) });
    const after = await waitUntil(async () => {
      const u = await usage();
      return u.breakdown.tts > before.breakdown.tts && u.breakdown.stt > before.breakdown.stt && u;
    });
    expect(after.breakdown.tts - before.breakdown.tts).toBeGreaterThanOrEqual(text.length);
    expect(after.breakdown.stt - before.breakdown.stt).toBeGreaterThan(0);
  });
});

describe('GET /v1/voices', () => {
  it('lists voices with id, name, language, gender, provider; filters by provider and language', async () => {
    const res = await p.request('/v1/voices?provider=default&language=en', { key });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { id: string; language: string; provider: string }[] };
    expect(data.map((v) => v.id)).toEqual(expect.arrayContaining(['flite-slt', 'flite-rms', 'espeak-en-us']));
    expect(data.every((v) => v.provider === 'default' && v.language.toLowerCase().startsWith('en'))).toBe(true);
  });
});

describe('POST /v1/transcribe', () => {
  it('transcribes a multipart upload with word timestamps', async () => {
    const res = await p.request('/v1/transcribe', {
      method: 'POST',
      key,
      body: form(helloWav, { timestamps: 'word', mode: 'accurate' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-provider-used')).toBe('default');
    const r = (await res.json()) as {
      text: string;
      words: unknown[];
      segments: unknown[];
      language: string;
      duration: number;
    };
    expect(wordErrors('please call me back when you get home tonight', r.text)).toBeLessThanOrEqual(2);
    expect(r.words.length).toBeGreaterThan(5);
    expect(r.segments.length).toBeGreaterThan(0);
    expect(r.language).toBe('en');
    expect(r.duration).toBeGreaterThan(1);
  });

  it('fetches audioUrl (JSON body) and decodes any container (mp3 here)', async () => {
    const mp3 = await p.request('/v1/synthesize', {
      method: 'POST',
      key,
      json: { text: 'the weather is nice today in the city of boston', format: 'mp3' },
    });
    const mp3Body = Buffer.from(await mp3.arrayBuffer());
    const fromUpload = await p.request('/v1/transcribe', { method: 'POST', key, body: form(mp3Body, {}, 'a.mp3') });
    expect(fromUpload.status).toBe(200);
    expect(
      wordErrors(
        'the weather is nice today in the city of boston',
        ((await fromUpload.json()) as { text: string }).text,
      ),
    ).toBeLessThanOrEqual(3);
    const res = await p.request('/v1/transcribe', {
      method: 'POST',
      key,
      json: { audioUrl: `${filesUrl}/hello.wav`, mode: 'fast' },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { text: string }).text).toContain('home');
  });

  it('refuses a private audioUrl without the allowlist, and a URL that is not audio with 415', async () => {
    const html = await p.request('/v1/transcribe', {
      method: 'POST',
      key,
      json: { audioUrl: `${filesUrl}/page.html` },
    });
    expect(html.status).toBe(415);
    const missing = await p.request('/v1/transcribe', {
      method: 'POST',
      key,
      json: { audioUrl: `${filesUrl}/nope.wav` },
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('url_fetch_failed');
  });

  it('413 beyond 25 MB, 415 for a non-audio upload, 400 for garbage, bad language or no audio', async () => {
    const big = await p.request('/v1/transcribe', {
      method: 'POST',
      key,
      body: form(Buffer.alloc(26 * 1024 * 1024, 1)),
    });
    expect(big.status).toBe(413);
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(100)]);
    const image = await p.request('/v1/transcribe', { method: 'POST', key, body: form(png, {}, 'x.png') });
    expect(image.status).toBe(415);
    expect(((await image.json()) as { error: { code: string } }).error.code).toBe('unsupported_media_type');
    const garbage = await p.request('/v1/transcribe', {
      method: 'POST',
      key,
      body: form(Buffer.from([0, 1, 2, 3, 200, 201, 202, 7, 8, 9, 10, 11]), {}, 'x.mp3'),
    });
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { error: { code: string } }).error.code).toBe('invalid_audio');
    const german = await p.request('/v1/transcribe', { method: 'POST', key, body: form(helloWav, { language: 'de' }) });
    expect(german.status).toBe(400);
    expect(((await german.json()) as { error: { code: string } }).error.code).toBe('unsupported_language');
    const none = await p.request('/v1/transcribe', { method: 'POST', key, json: { language: 'en' } });
    expect(none.status).toBe(400);
    const badMode = await p.request('/v1/transcribe', { method: 'POST', key, body: form(helloWav, { mode: 'turbo' }) });
    expect(badMode.status).toBe(400);
    expect(((await badMode.json()) as { error: { param: string } }).error.param).toBe('mode');
  });

  it('diarizes when asked (speaker labels on segments)', async () => {
    const a = await speak(tts, 'hello how are you doing today', 'flite-rms');
    const b = await speak(tts, 'i am fine thank you and you', 'flite-slt');
    const gap = Buffer.alloc(16000 * 2);
    const wav = encodeWav(Buffer.concat([a, gap, b, gap, a]), 16000);
    const res = await p.request('/v1/transcribe', { method: 'POST', key, body: form(wav, { diarize: 'true' }) });
    const r = (await res.json()) as { segments: { speaker: string }[] };
    expect(r.segments.map((s) => s.speaker)).toEqual(['speaker_0', 'speaker_1', 'speaker_0']);
  });
});

describe('TTS → STT round trip', () => {
  it('comes back with word error rate ≤ 15 % on the documented sentence set', async () => {
    let errors = 0;
    let total = 0;
    for (const sentence of ROUND_TRIP_SENTENCES) {
      const audio = await p.request('/v1/synthesize', { method: 'POST', key, json: { text: sentence, format: 'mp3' } });
      const res = await p.request('/v1/transcribe', {
        method: 'POST',
        key,
        body: form(Buffer.from(await audio.arrayBuffer()), {}, 'a.mp3'),
      });
      const { text } = (await res.json()) as { text: string };
      errors += wordErrors(sentence, text);
      total += words(sentence).length;
    }
    const wer = errors / total;
    console.error(`round-trip WER ${(wer * 100).toFixed(1)} % over ${total} words`);
    expect(wer).toBeLessThanOrEqual(0.15);
  }, 300_000);
});

describe('POST /v1/transcribe/async', () => {
  it('202 → processing → completed, visible to its owner only', async () => {
    const res = await p.request('/v1/transcribe/async', {
      method: 'POST',
      key,
      body: form(helloWav, { timestamps: 'word' }),
    });
    expect(res.status).toBe(202);
    const job = (await res.json()) as { id: string; status: string; createdAt: string };
    expect(job.status).toBe('processing');
    expect(job.id).toMatch(/^job_/);
    const done = await waitUntil(async () => {
      const r = (await (await p.request(`/v1/transcribe/${job.id}`, { key })).json()) as { status: string };
      return r.status !== 'processing' && r;
    }, 60_000);
    expect(done).toMatchObject({
      id: job.id,
      status: 'completed',
      createdAt: job.createdAt,
      completedAt: expect.any(String),
    });
    const result = (done as unknown as { result: { text: string; words: unknown[] } }).result;
    expect(result.text).toContain('home');
    expect(result.words.length).toBeGreaterThan(3);
    // The uploaded audio went through S3 and is removed once the job has an outcome.
    expect(await p.infra.storage.exists(objectKey(developerId, 'uploads', job.id, 'audio'))).toBe(false);
    expect((await p.request(`/v1/transcribe/${job.id}`, { key: otherKey })).status).toBe(404);
    expect((await p.request('/v1/transcribe/job_doesnotexist', { key })).status).toBe(404);
  });

  it('works from an audioUrl too', async () => {
    const res = await p.request('/v1/transcribe/async', {
      method: 'POST',
      key,
      json: { audioUrl: `${filesUrl}/hello.wav` },
    });
    const { id } = (await res.json()) as { id: string };
    const done = await waitUntil(async () => {
      const r = (await (await p.request(`/v1/transcribe/${id}`, { key })).json()) as { status: string };
      return r.status !== 'processing' && r;
    }, 60_000);
    expect(done.status).toBe('completed');
  });

  it('fails with an error code on corrupt audio', async () => {
    const corrupt = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt '), Buffer.alloc(64, 0xab)]);
    const res = await p.request('/v1/transcribe/async', { method: 'POST', key, body: form(corrupt) });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const done = await waitUntil(async () => {
      const r = (await (await p.request(`/v1/transcribe/${id}`, { key })).json()) as { status: string };
      return r.status !== 'processing' && r;
    }, 60_000);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'invalid_audio' }, completedAt: expect.any(String) });
  });

  it('400s at submission for an unsupported language', async () => {
    const res = await p.request('/v1/transcribe/async', {
      method: 'POST',
      key,
      body: form(helloWav, { language: 'fr' }),
    });
    expect(res.status).toBe(400);
  });
});
