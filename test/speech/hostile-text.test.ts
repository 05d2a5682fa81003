import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue #35 item 3: two or three POST /v1/synthesize with one 9,000-letter word kept the local flite workers
 * spelling it out for minutes (another developer's sentence took 187 s), and the requests ended 504 with their
 * holds refunded. Now such a word is a 400 on every route that feeds the local voices, before anything is
 * reserved, and a synthesis stopped at its CPU deadline is charged for the work done. This platform runs with a
 * CPU deadline of 0 ms (SPEECH_FLITE_CPU_*), so any piece that is still running at a check is over it.
 */
let p: TestPlatform;
let key: string;
let developerId: string;

beforeAll(async () => {
  p = await startTestPlatform({
    roles: ['api'],
    env: { SPEECH_FLITE_CPU_BASE_MS: '0', SPEECH_FLITE_CPU_MS_PER_CHAR: '0' },
  });
  ({ apiKey: key, developerId } = await p.developer('pro'));
}, 120_000);
afterAll(() => p?.close());

const LONG_WORD = 'a'.repeat(9000);

interface Envelope {
  error: { code: string; message: string; param: string | null };
}

async function ledgerRows(requestId: string) {
  const { rows } = await p.infra.db.query<{ units: number; status: string }>(
    `select units::float8 as units, status from credit_ledger where developer_id = $1 and request_id = $2`,
    [developerId, requestId],
  );
  return rows;
}

async function refused(res: Response, param: string): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as Envelope;
  expect(body.error).toMatchObject({ code: 'validation_failed', param });
  expect(body.error.message).toMatch(/longer than 64 letters or digits/);
  expect(body.error.message).not.toMatch(/aaaa/);
  // Refused before a hold was taken: nothing to refund, nothing charged.
  expect(await ledgerRows(String(res.headers.get('x-request-id')))).toEqual([]);
}

describe('a word the local voices would spell out for minutes', () => {
  it('POST /v1/synthesize: 400 on text', async () => {
    await refused(await p.request('/v1/synthesize', { method: 'POST', key, json: { text: LONG_WORD } }), 'text');
  });

  it('POST /v1/audio/speech: 400 on input', async () => {
    const json = { model: 'tts-1', voice: 'alloy', input: LONG_WORD.slice(0, 4096) };
    await refused(await p.request('/v1/audio/speech', { method: 'POST', key, json }), 'input');
  });

  it("POST /v1/agents/:id/speak: 400 on text, in the agent's local voice", async () => {
    const agent = (await (
      await p.request('/v1/agents', { method: 'POST', key, json: { name: 'Speaker' } })
    ).json()) as { id: string };
    const res = await p.request(`/v1/agents/${agent.id}/speak`, { method: 'POST', key, json: { text: LONG_WORD } });
    await refused(res, 'text');
  });

  it('POST /v1/video/avatar from text: 400 at submission, not a job that fails later', async () => {
    const json = { image_url: 'https://example.com/face.jpg', text: `Hello ${LONG_WORD}` };
    await refused(await p.request('/v1/video/avatar', { method: 'POST', key, json }), 'text');
  });
});

describe('a synthesis past its CPU deadline', () => {
  it('is stopped, answered 400 synthesis_too_costly, and charged for the work done (not refunded)', async () => {
    // Four-digit numbers in the slt voice: seconds of CPU for a few hundred characters.
    const text = Array.from({ length: 40 }, (_, i) => String(4321 + i * 7)).join(' ');
    const res = await p.request('/v1/synthesize', {
      method: 'POST',
      key,
      json: { text, voiceId: 'flite-slt', format: 'wav' },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Envelope;
    expect(body.error).toMatchObject({ code: 'synthesis_too_costly', param: 'text' });
    expect(body.error.message).toMatch(/work done is charged/);
    const requestId = String(res.headers.get('x-request-id'));
    const [row] = await waitUntil(async () => {
      const rows = await ledgerRows(requestId);
      return rows.length && rows[0]!.status !== 'reserved' ? rows : null;
    }, 30_000);
    expect(row!.status).toBe('committed');
    expect(row!.units).toBeGreaterThan(0);
    expect(row!.units).toBeLessThanOrEqual(text.length);
  });
});
