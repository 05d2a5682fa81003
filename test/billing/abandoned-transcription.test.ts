import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav } from '../../shared/kernel/audio/index.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { conversation, ROUND_TRIP_SENTENCES } from '../speech/helpers/speech.ts';

/**
 * The sibling of issue #24 finding 2 (abandoned-synthesis.test.ts): a streamed transcription (`stream=true`) the
 * client abandoned was refunded in full although it had been sent text. The rule now (docs/billing.md): charged
 * for the audio seconds whose text was delivered, i.e. up to the end of the last segment sent.
 */
let p: TestPlatform;
let key: string;
let developerId: string;
let wav: Buffer;
let seconds: number;

beforeAll(async () => {
  // The round-trip sentences twice with 0.5 s pauses: about 60 s, in several pieces for the local decoder.
  const turns = [...ROUND_TRIP_SENTENCES, ...ROUND_TRIP_SENTENCES].map((text) => ({ text, voice: 'default' }));
  wav = encodeWav((await conversation(new LocalTtsEngine(), turns, 0.5)).pcm, 16000);
  seconds = (wav.length - 44) / 32000;
  p = await startTestPlatform({ roles: ['api'] });
  ({ apiKey: key, developerId } = await p.developer('pro'));
}, 120_000);
afterAll(() => p?.close());

/** Streams a transcription and goes away after `deltas` text deltas have arrived; returns the request id. */
async function abandonAfter(deltas: number): Promise<string> {
  const fd = new FormData();
  fd.append('model', 'whisper-1');
  fd.append('stream', 'true');
  fd.append('file', new Blob([wav]), 'speech.wav');
  const ac = new AbortController();
  const res = await p.request('/v1/audio/transcriptions', { method: 'POST', key, body: fd, signal: ac.signal });
  expect(res.status).toBe(200);
  const requestId = res.headers.get('x-request-id')!;
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while ((text.match(/transcript\.text\.delta/g) ?? []).length < deltas) {
      const { done, value } = await reader.read();
      if (done) throw new Error('the stream ended before the deltas wanted');
      text += decoder.decode(value, { stream: true });
    }
    expect(text).not.toContain('transcript.text.done');
  } finally {
    ac.abort();
  }
  return requestId;
}

async function settledRow(requestId: string) {
  return waitUntil(async () => {
    const { rows } = await p.infra.db.query<{ units: number; credits: number; status: string }>(
      `select units::float8 as units, credits::float8 as credits, status from credit_ledger
        where developer_id = $1 and request_id = $2`,
      [developerId, requestId],
    );
    return rows[0] && rows[0].status !== 'reserved' ? rows[0] : null;
  }, 60_000);
}

describe('abandoned streamed transcription', () => {
  it('is charged for the seconds whose text was delivered, more the further the client read, never refunded', async () => {
    const one = await settledRow(await abandonAfter(1));
    expect(one.status).toBe('committed');
    expect(one.units).toBeGreaterThan(0);
    expect(one.units).toBeLessThan(seconds * 0.6);
    expect(one.credits).toBeGreaterThan(0);

    const three = await settledRow(await abandonAfter(3));
    expect(three.status).toBe('committed');
    expect(three.units).toBeGreaterThan(one.units);
    expect(three.units).toBeLessThan(seconds);
  }, 180_000);
});
