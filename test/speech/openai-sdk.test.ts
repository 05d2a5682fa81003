import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeToPcm, encodeWav, parseWav, sniffMedia } from '../../shared/kernel/audio/index.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { speak, wordErrors } from './helpers/speech.ts';

/** The official `openai` SDK pointed at the running platform, as a user would. */
let p: TestPlatform;
let client: OpenAI;
let wav: Buffer;
const SENTENCE = 'thank you very much for your help with this project';

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  const { apiKey } = await p.developer('pro');
  client = new OpenAI({ baseURL: `${p.url}/v1`, apiKey, maxRetries: 0 });
  wav = encodeWav(await speak(new LocalTtsEngine(), SENTENCE), 16000);
});

afterAll(() => p?.close());

describe('openai SDK: audio.speech', () => {
  it.each(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const)('creates speech as %s', async (format) => {
    const res = await client.audio.speech.create({
      model: 'tts-1',
      voice: 'alloy',
      input: 'Hello from an OpenAI client.',
      response_format: format,
    });
    const body = Buffer.from(await res.arrayBuffer());
    const expected = {
      mp3: 'audio/mpeg',
      opus: 'audio/opus',
      aac: 'audio/aac',
      flac: 'audio/flac',
      wav: 'audio/wav',
      pcm: 'audio/pcm',
    }[format];
    expect(res.headers.get('content-type')).toBe(expected);
    expect(res.headers.get('x-provider-used')).toBe('default');
    if (format === 'pcm') {
      // Raw 24 kHz s16le mono: about 2 s of speech → ~96 KB.
      expect(body.length % 2).toBe(0);
      expect(body.length / 2 / 24000).toBeGreaterThan(1);
    } else {
      expect(sniffMedia(body)).toBe('media');
      expect((await decodeToPcm(body, { sampleRate: 16000 })).duration).toBeGreaterThan(1);
    }
    if (format === 'wav') expect(parseWav(body).sampleRate).toBe(16000);
  });

  it('honours speed and voice objects', async () => {
    const slow = Buffer.from(
      await (
        await client.audio.speech.create({
          model: 'gpt-4o-mini-tts',
          voice: 'onyx',
          input: 'Speed test sentence.',
          response_format: 'wav',
          speed: 0.5,
        })
      ).arrayBuffer(),
    );
    const fast = Buffer.from(
      await (
        await client.audio.speech.create({
          model: 'gpt-4o-mini-tts',
          voice: 'onyx',
          input: 'Speed test sentence.',
          response_format: 'wav',
          speed: 2,
        })
      ).arrayBuffer(),
    );
    expect(parseWav(slow).data.length / parseWav(fast).data.length).toBeGreaterThan(2.5);
    const custom = await client.audio.speech.create({
      model: 'flite',
      voice: { id: 'flite-awb' } as never,
      input: 'Custom voice.',
      response_format: 'mp3',
    });
    expect(custom.headers.get('content-type')).toBe('audio/mpeg');
  });

  it('streams SSE deltas and a done event with usage', async () => {
    const res = await client.audio.speech.create({
      model: 'tts-1',
      voice: 'nova',
      input: 'Streaming speech. In two sentences.',
      response_format: 'mp3',
      stream_format: 'sse',
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text())
      .split('\n\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as { type: string; audio?: string; usage?: unknown });
    const deltas = events.filter((e) => e.type === 'speech.audio.delta');
    expect(deltas.length).toBeGreaterThan(0);
    expect(sniffMedia(Buffer.concat(deltas.map((d) => Buffer.from(d.audio!, 'base64'))))).toBe('media');
    expect(events.at(-1)).toMatchObject({ type: 'speech.audio.done', usage: { input_tokens: expect.any(Number) } });
  });

  it('surfaces 400s through the SDK error type', async () => {
    const err = await client.audio.speech
      .create({ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(4097) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input');
    const model = await client.audio.speech
      .create({ model: 'nonexistent', voice: 'alloy', input: 'hi' })
      .catch((e: unknown) => e);
    expect(model).toBeInstanceOf(OpenAI.BadRequestError);
  });
});

describe('openai SDK: audio.transcriptions', () => {
  const file = () => toFile(wav, 'speech.wav', { type: 'audio/wav' });

  it('json (default)', async () => {
    const r = await client.audio.transcriptions.create({ file: await file(), model: 'whisper-1' });
    expect(wordErrors(SENTENCE, r.text)).toBeLessThanOrEqual(2);
    expect((r as unknown as { usage: { type: string; seconds: number } }).usage).toMatchObject({ type: 'duration' });
  });

  it('text, srt and vtt come back as plain strings', async () => {
    const text = await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'text',
    });
    expect(typeof text).toBe('string');
    expect(wordErrors(SENTENCE, text as unknown as string)).toBeLessThanOrEqual(2);
    const srt = (await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'srt',
    })) as unknown as string;
    expect(srt).toMatch(/^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n\w/);
    const vtt = (await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'vtt',
    })) as unknown as string;
    expect(vtt).toMatch(/^WEBVTT\n\n\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}\n\w/);
  });

  it('verbose_json with word and segment granularities', async () => {
    const r = await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    expect(r).toMatchObject({
      task: 'transcribe',
      language: 'english',
      duration: expect.any(Number),
      text: expect.any(String),
    });
    expect(r.words!.length).toBeGreaterThan(5);
    expect(r.words![0]).toEqual({ word: expect.any(String), start: expect.any(Number), end: expect.any(Number) });
    expect(r.segments![0]).toMatchObject({
      id: 0,
      seek: 0,
      start: expect.any(Number),
      end: expect.any(Number),
      text: expect.any(String),
      tokens: [],
      avg_logprob: expect.any(Number),
      no_speech_prob: 0,
    });
    const wordsOnly = await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'verbose_json',
      timestamp_granularities: ['word'],
    });
    expect(wordsOnly.words!.length).toBeGreaterThan(5);
    expect(wordsOnly.segments).toBeUndefined();
  });

  it('streams transcript.text.delta … transcript.text.done', async () => {
    const stream = await client.audio.transcriptions.create({
      file: await file(),
      model: 'gpt-4o-mini-transcribe',
      stream: true,
    });
    const events: { type: string; delta?: string; text?: string }[] = [];
    for await (const e of stream) events.push(e as never);
    expect(events.some((e) => e.type === 'transcript.text.delta')).toBe(true);
    const done = events.at(-1)!;
    expect(done.type).toBe('transcript.text.done');
    expect(
      events
        .filter((e) => e.type === 'transcript.text.delta')
        .map((e) => e.delta)
        .join(''),
    ).toBe(done.text);
  });

  it('400s for an unsupported language and a non-audio file (415)', async () => {
    const lang = await client.audio.transcriptions
      .create({ file: await file(), model: 'whisper-1', language: 'ja' })
      .catch((e: unknown) => e);
    expect(lang).toBeInstanceOf(OpenAI.BadRequestError);
    expect((lang as { code: string }).code).toBe('unsupported_language');
    const txt = await client.audio.transcriptions
      .create({ file: await toFile(Buffer.from('just some text'), 'notes.txt'), model: 'whisper-1' })
      .catch((e: unknown) => e);
    expect((txt as { status: number }).status).toBe(415);
  });
});

describe('openai SDK: models', () => {
  it('lists the audio models in the /v1/models shape', async () => {
    const list = (await client.get('/audio/models')) as {
      object: string;
      data: { id: string; object: string; owned_by: string; kind: string }[];
    };
    expect(list.object).toBe('list');
    const ids = list.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['flite', 'pocketsphinx', 'tts-1', 'whisper-1']));
    expect(list.data.every((m) => m.object === 'model' && typeof m.owned_by === 'string')).toBe(true);
    expect(list.data.find((m) => m.id === 'elevenlabs/tts')?.kind).toBe('tts');
  });
});
