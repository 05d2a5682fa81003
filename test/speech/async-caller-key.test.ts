import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tone, wav } from '../../support/doubles/audio.ts';
import { startDeepgramDouble } from '../../support/doubles/deepgram.ts';
import type { HttpDouble } from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { SCRIPT } from '../../shared/domains/agent-tests/simulators/transcript.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue #15 item 8: POST /v1/transcribe/async refused a caller's X-Provider-Key-* header. The key now travels
 * with the job sealed (as video jobs do), the worker transcribes with it, and it is erased once the job ends.
 */
let p: TestPlatform;
let key: string;
let deepgram: HttpDouble;

beforeAll(async () => {
  deepgram = await startDeepgramDouble();
  // No DEEPGRAM_API_KEY: the only key the job can run on is the caller's.
  p = await startTestPlatform({ roles: ['api', 'cpu'], env: { DEEPGRAM_BASE_URL: deepgram.url } });
  key = (await p.developer('pro')).apiKey;
});
afterAll(async () => {
  await p?.close();
  await deepgram?.close();
});

function submit(providerKey: string): Promise<Response> {
  const fd = new FormData();
  fd.append('provider', 'deepgram');
  fd.append('language', 'en');
  fd.append('file', new Blob([wav(tone(16000, 2), 16000)]), 'a.wav');
  return p.request('/v1/transcribe/async', {
    method: 'POST',
    key,
    headers: { 'X-Provider-Key-Deepgram': providerKey },
    body: fd,
  });
}

async function outcome(id: string) {
  return waitUntil(async () => {
    const r = (await (await p.request(`/v1/transcribe/${id}`, { key })).json()) as {
      status: string;
      result?: { text: string };
      error?: { code: string };
    };
    return r.status !== 'processing' && r;
  }, 60_000);
}

async function sealedRow(id: string) {
  const { rows } = await p.infra.db.query<{ vendor: string; ciphertext: Buffer | null; erased_at: Date | null }>(
    'select vendor, ciphertext, erased_at from transcription_job_keys where job_id = $1',
    [id],
  );
  return rows[0];
}

describe('async transcription with a caller header key', () => {
  it('runs the job on the header key, unmetered, and erases the sealed copy when it completes', async () => {
    const res = await submit(deepgram.key);
    expect(res.status).toBe(202);
    expect(res.headers.get('x-provider-used')).toBe('deepgram');
    expect(res.headers.get('x-usage-bypassed')).toBe('true');
    const { id } = (await res.json()) as { id: string };
    const done = await outcome(id);
    expect(done).toMatchObject({ status: 'completed', result: { text: SCRIPT } });
    expect(deepgram.last().headers.authorization).toBe(`Token ${deepgram.key}`);
    const sealed = await sealedRow(id);
    expect(sealed).toMatchObject({ vendor: 'deepgram', ciphertext: null });
    expect(sealed?.erased_at).toBeInstanceOf(Date);
    // The key is never stored in the clear, in the job row or anywhere else in it.
    const { rows } = await p.infra.db.query<{ row: string }>(
      'select j::text as row from transcription_jobs j where id = $1',
      [id],
    );
    expect(rows[0]!.row).not.toContain(deepgram.key);
  });

  it('fails the job with provider_unavailable when the vendor rejects the header key', async () => {
    const res = await submit('not-the-deepgram-key');
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    expect(await outcome(id)).toMatchObject({ status: 'failed', error: { code: 'provider_unavailable' } });
    expect((await sealedRow(id))?.ciphertext).toBeNull();
  });

  it('without a header key and with no stored or platform key, refuses at submission (400)', async () => {
    const fd = new FormData();
    fd.append('provider', 'deepgram');
    fd.append('file', new Blob([wav(tone(16000, 1), 16000)]), 'a.wav');
    const res = await p.request('/v1/transcribe/async', { method: 'POST', key, body: fd });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('provider_unavailable');
  });
});
