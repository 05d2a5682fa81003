import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Issue #35: one developer may run at most SPEECH_LOCAL_SYNTHESES_PER_DEVELOPER (default 2) syntheses on the local
 * voices at once in one platform process; one more is 429 local_syntheses_limited, before anything is reserved or
 * started. Another developer is not held back by it, and a place frees once its stream has ended, however it ended.
 */
let p: TestPlatform;

beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
}, 120_000);

afterAll(() => p?.close());

// About a minute of speech: its stream is still going when the next request comes (its body is not read).
const LONG_TEXT = Array.from(
  { length: 12 },
  (_, i) => `Sentence ${i + 1}: the clinic is open from eight until six on weekdays, and until one on Saturdays.`,
).join(' ');

/** Starts a synthesis and returns once its headers arrived; the body stays unread until `stop`. */
async function open(key: string, text = LONG_TEXT) {
  const ac = new AbortController();
  const res = await fetch(`${p.url}/v1/synthesize`, {
    method: 'POST',
    // One connection a request, closed with its response: a keep-alive connection left open after a 429 held the
    // platform's close for Fastify's 72 s keep-alive timeout (the file took 73 s, its test 0.3 s).
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ text }),
    signal: ac.signal,
  });
  return { res, stop: () => ac.abort() };
}

/** Opens one once the developer has a free place (a place frees as its stream's end reaches the server). */
async function openOnceFree(key: string, text = LONG_TEXT) {
  for (let i = 0; i < 100; i++) {
    const r = await open(key, text);
    if (r.res.status !== 429) return r;
    await r.res.arrayBuffer();
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error('the places never freed');
}

describe('syntheses on the local voices at once, per developer', () => {
  it('the third of one developer is 429 while two stream; another developer is served; a place frees at the end', async () => {
    const a = await p.developer('pro');
    const b = await p.developer('pro');
    const first = await open(a.apiKey);
    const second = await open(a.apiKey);
    expect([first.res.status, second.res.status]).toEqual([200, 200]);

    const third = await open(a.apiKey);
    expect(third.res.status).toBe(429);
    expect(third.res.headers.get('retry-after')).toBe('5');
    const body = (await third.res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('local_syntheses_limited');
    expect(body.error.message).toMatch(/already has 2 syntheses running on the local voices/);

    // Another developer's request is answered meanwhile.
    const other = await open(b.apiKey, 'Hello there.');
    expect(other.res.status).toBe(200);
    expect((await other.res.arrayBuffer()).byteLength).toBeGreaterThan(1000);

    // One stream abandoned by its client frees its place: a short one then starts while the long one still streams.
    second.stop();
    const again = await openOnceFree(a.apiKey, 'Hello again.');
    expect(again.res.status).toBe(200);
    // Read to its end, it frees its place too: with the long one still holding the other, one more starts.
    expect((await again.res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    const longAgain = await openOnceFree(a.apiKey);
    expect(longAgain.res.status).toBe(200);
    // With every stream ended (two abandoned), none of the two places is left taken: two start side by side.
    longAgain.stop();
    first.stop();
    const pair = await (async () => {
      for (let i = 0; i < 100; i++) {
        const both = [await open(a.apiKey), await open(a.apiKey)];
        if (both.every((r) => r.res.status === 200)) return both;
        for (const r of both) r.stop();
        await new Promise((res) => setTimeout(res, 100));
      }
      throw new Error('the places never freed');
    })();
    for (const r of pair) r.stop();
  }, 120_000);
});
