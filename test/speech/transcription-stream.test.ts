import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcriptionSse } from '../../api/services/speech-openai.ts';
import { encodeWav } from '../../shared/kernel/audio/index.ts';
import type { SttProgress } from '../../shared/engines/stt/types.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { ROUND_TRIP_SENTENCES, conversation, runningDecoders, speak, wordErrors } from './helpers/speech.ts';

/** POST /v1/audio/transcriptions with stream=true: deltas leave as the local decoder produces them. */
let p: TestPlatform;
let key: string;
let longWav: Buffer;
let shortWav: Buffer;
const logLines: string[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
const LONG_TEXT = ROUND_TRIP_SENTENCES.join(' ');
const SHORT_TEXT = 'please call me back when you get home tonight';

interface SseEvent {
  type?: string;
  delta?: string;
  text?: string;
  usage?: { type: string; seconds: number };
  error?: { code: string };
}

/** Reads SSE `data:` events off a response body as they arrive (not after the body has ended). */
async function* sseEvents(res: Response): AsyncGenerator<SseEvent> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
      const data = buf
        .slice(0, i)
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      buf = buf.slice(i + 2);
      if (data) yield JSON.parse(data) as SseEvent;
    }
  }
}

function form(file: Buffer, fields: Record<string, string>, filename = 'speech.wav'): FormData {
  const fd = new FormData();
  for (const [k, v] of Object.entries({ model: 'whisper-1', ...fields })) fd.append(k, v);
  fd.append('file', new Blob([file]), filename);
  return fd;
}

interface LedgerRow {
  status: string;
  category: string;
  operation: string;
  unit: string;
  units: string;
  credits: string;
  billable: boolean;
}

async function ledger(requestId: string): Promise<LedgerRow | undefined> {
  const { rows } = await p.infra.db.query<LedgerRow>(
    'select status, category, operation, unit, units, credits, billable from credit_ledger where request_id = $1',
    [requestId],
  );
  return rows[0];
}

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  const tts = new LocalTtsEngine();
  // The round-trip sentences with 0.5 s pauses: about 31 s, two pieces for the decoder (INCREMENTAL_PIECES) and a
  // segment per sentence. Twice that (63 s) took 68-173 s to decode beside three busy loops on a 2-core VM (load
  // 8-13), past the test's 120 s in 2 of 3 runs: the decoding is CPU-bound and the deadline fixed, so the audio is
  // sized to it (worst measured rate 2.75 s per audio second: about 85 s).
  const turns = ROUND_TRIP_SENTENCES.map((text) => ({ text, voice: 'default' }));
  longWav = encodeWav((await conversation(tts, turns, 0.5)).pcm, 16000);
  shortWav = encodeWav(await speak(tts, SHORT_TEXT), 16000);
  p = await startTestPlatform({ roles: ['api'], logLines });
  key = (await p.developer('pro')).apiKey;
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await p?.close();
});

describe('POST /v1/audio/transcriptions stream=true', () => {
  it('sends a delta per segment while the rest is still being decoded; the deltas spell the done text', async () => {
    const started = performance.now();
    const res = await p.request('/v1/audio/transcriptions', {
      method: 'POST',
      key,
      body: form(longWav, { stream: 'true' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('x-provider-used')).toBe('default');
    const requestId = res.headers.get('x-request-id')!;
    const events: SseEvent[] = [];
    let atFirstDelta: { ms: number; ledger?: string; decoders: number } | null = null;
    let doneMs = 0;
    for await (const ev of sseEvents(res)) {
      events.push(ev);
      if (ev.type === 'transcript.text.delta' && !atFirstDelta) {
        atFirstDelta = {
          ms: performance.now() - started,
          // The charge is committed only after the last segment is decoded, so a hold still open proves the first
          // delta left before decoding finished (no timing involved); a decoder is running at that moment too.
          ledger: (await ledger(requestId))?.status,
          decoders: runningDecoders().length,
        };
      }
      if (ev.type === 'transcript.text.done') doneMs = performance.now() - started;
    }
    expect(atFirstDelta).toMatchObject({ ledger: 'reserved' });
    expect(atFirstDelta!.decoders).toBeGreaterThan(0);
    const done = events.at(-1)!;
    expect(done.type).toBe('transcript.text.done');
    const deltas = events.slice(0, -1);
    expect(deltas.every((e) => e.type === 'transcript.text.delta')).toBe(true);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.delta).join('')).toBe(done.text);
    expect(wordErrors(LONG_TEXT, done.text!) / LONG_TEXT.split(' ').length).toBeLessThan(0.1);
    const seconds = (longWav.length - 44) / 32000;
    expect(done.usage).toEqual({ type: 'duration', seconds: Math.ceil(seconds) });
    // Settled as a non-streaming call is: committed for the audio seconds.
    const row = (await ledger(requestId))!;
    expect(row).toMatchObject({ status: 'committed', category: 'stt', operation: 'audio.transcriptions' });
    expect(Number(row.units)).toBeCloseTo(seconds, 1);
    console.error(
      `streamed transcription of ${seconds.toFixed(1)} s: first delta after ${atFirstDelta!.ms.toFixed(0)} ms, ` +
        `done after ${doneMs.toFixed(0)} ms (${deltas.length} deltas)`,
    );
  }, 120_000);

  it('gives the non-streaming text and charges the same', async () => {
    const plain = await p.request('/v1/audio/transcriptions', { method: 'POST', key, body: form(shortWav, {}) });
    expect(plain.status).toBe(200);
    const { text } = (await plain.json()) as { text: string };
    const streamed = await p.request('/v1/audio/transcriptions', {
      method: 'POST',
      key,
      body: form(shortWav, { stream: 'true' }),
    });
    const events: SseEvent[] = [];
    for await (const ev of sseEvents(streamed)) events.push(ev);
    expect(events.at(-1)).toMatchObject({ type: 'transcript.text.done', text });
    expect(wordErrors(SHORT_TEXT, text)).toBeLessThanOrEqual(2);
    const [a, b] = await Promise.all([
      ledger(plain.headers.get('x-request-id')!),
      ledger(streamed.headers.get('x-request-id')!),
    ]);
    expect(a).toMatchObject({ status: 'committed' });
    expect(b).toEqual(a);
  }, 60_000);

  it('stops decoding when the client goes away, charging only the delivered seconds, without an error or unhandled rejection', async () => {
    const ac = new AbortController();
    const res = await p.request('/v1/audio/transcriptions', {
      method: 'POST',
      key,
      body: form(longWav, { stream: 'true' }),
      signal: ac.signal,
    });
    const requestId = res.headers.get('x-request-id')!;
    let sawDone = false;
    const reading = (async () => {
      for await (const ev of sseEvents(res)) {
        if (ev.type === 'transcript.text.done') sawDone = true;
        if (ev.type === 'transcript.text.delta') ac.abort();
      }
    })();
    await expect(reading).rejects.toThrow();
    expect(sawDone).toBe(false);
    // Charged for the audio whose text went out (docs/billing.md), not refunded and not the whole file.
    const row = await waitUntil(async () => {
      const r = await ledger(requestId);
      return r && r.status !== 'reserved' ? r : null;
    });
    expect(row.status).toBe('committed');
    expect(Number(row.units)).toBeGreaterThan(0);
    expect(Number(row.units)).toBeLessThan((longWav.length - 44) / 32000);
    await waitUntil(() => runningDecoders().length === 0);
    expect(unhandled).toEqual([]);
    expect(logLines.filter((l) => (JSON.parse(l) as { level: number }).level >= 50)).toEqual([]);
    // The decoder slot is free again: the next request is served.
    const next = await p.request('/v1/audio/transcriptions', { method: 'POST', key, body: form(shortWav, {}) });
    expect(next.status).toBe(200);
  }, 120_000);

  it('answers bad input with the one JSON error envelope, not an event stream', async () => {
    const cases: [FormData, number, string][] = [
      [
        form(Buffer.from([0, 1, 2, 3, 200, 201, 202, 7, 8, 9, 10, 11]), { stream: 'true' }, 'x.mp3'),
        400,
        'invalid_audio',
      ],
      [form(shortWav, { stream: 'true', language: 'ja' }), 400, 'unsupported_language'],
      [form(Buffer.from('just some text'), { stream: 'true' }, 'notes.txt'), 415, 'unsupported_media_type'],
      [form(shortWav, { stream: 'true', model: 'nope' }), 400, 'validation_failed'],
    ];
    for (const [body, status, code] of cases) {
      const res = await p.request('/v1/audio/transcriptions', { method: 'POST', key, body });
      expect(res.status, code).toBe(status);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    }
  });
});

describe('transcriptionSse', () => {
  const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
  async function* failingAfterOne(): AsyncGenerator<SttProgress> {
    yield { type: 'segment', segment: { start: 0, end: 1, text: 'hello there' } };
    throw new ApiError('upstream_error', { provider: 'default', detail: 'the decoder died' });
  }
  const parse = (lines: string[]) => lines.map((l) => JSON.parse(l.replace(/^data: /, '')) as SseEvent);

  it('ends a stream that fails after it opened with the error envelope as an event (what the openai SDK raises)', async () => {
    const lines: string[] = [];
    const signal = new AbortController().signal;
    for await (const l of transcriptionSse(failingAfterOne(), { signal, requestId: 'req_1', log })) lines.push(l);
    expect(parse(lines)).toEqual([
      { type: 'transcript.text.delta', delta: 'hello there' },
      {
        error: {
          type: 'api_error',
          code: 'upstream_error',
          message: expect.stringContaining('the decoder died'),
          param: null,
          requestId: 'req_1',
        },
      },
    ]);
  });

  it('says nothing more to a client that has gone away', async () => {
    const ac = new AbortController();
    ac.abort(new Error('client disconnected'));
    const lines: string[] = [];
    for await (const l of transcriptionSse(failingAfterOne(), { signal: ac.signal, requestId: 'r', log })) {
      lines.push(l);
    }
    expect(parse(lines).map((e) => e.type)).toEqual(['transcript.text.delta']);
  });
});
