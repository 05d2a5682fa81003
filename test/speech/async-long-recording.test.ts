import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav } from '../../shared/kernel/audio/index.ts';
import { loadTranscriptionJob } from '../../shared/domains/speech/transcription-store.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { speak } from './helpers/speech.ts';

let p: TestPlatform;
let key: string;
let wav: Buffer;
let seconds: number;

const LINES = [
  'please call me back when you get home tonight',
  'we need to buy milk bread and eggs from the store',
  'the train to new york leaves at seven in the evening',
  'thank you very much for your help with this project',
  'can you tell me the way to the nearest hospital',
  'the children are playing in the park after school',
  'the weather is nice today in the city of boston',
  'turn left at the next corner and go straight ahead',
];

beforeAll(async () => {
  const tts = new LocalTtsEngine();
  const gap = Buffer.alloc(2 * 16000 * 1.5); // 1.5 s between sentences: pauses to cut at
  const parts: Buffer[] = [];
  // Three rounds of the eight lines: about 75 s, several 10-30 s pieces.
  for (let round = 0; round < 3; round++) for (const l of LINES) parts.push(await speak(tts, l), gap);
  tts.close();
  const pcm = Buffer.concat(parts);
  seconds = pcm.length / 2 / 16000;
  wav = encodeWav(pcm, 16000);
  p = await startTestPlatform({ roles: ['api', 'cpu'] });
  ({ apiKey: key } = await p.developer('pro'));
}, 180_000);

afterAll(async () => {
  await p?.close();
});

describe('POST /v1/transcribe/async: a long recording on the local engine', () => {
  it('comes back as utterance segments in order, decoded piece by piece with progress on the job', async () => {
    const fd = new FormData();
    fd.append('file', new Blob([wav]), 'long.wav');
    fd.append('mode', 'fast');
    const res = await p.request('/v1/transcribe/async', { method: 'POST', key, body: fd });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    // Polled once a second: beside a CPU hog the job ran long enough for 50 ms polls to meet the rate limit, whose
    // 429 envelope (no status) read as the job's end.
    const done = (await waitUntil(
      async () => {
        const r = (await (await p.request(`/v1/transcribe/${id}`, { key })).json()) as { status?: string };
        return (r.status === 'completed' || r.status === 'failed') && r;
      },
      480_000,
      1000,
    )) as unknown as {
      status: string;
      progress?: unknown;
      result: { text: string; duration: number; segments: Array<{ start: number; end: number; text: string }> };
    };
    expect(done.status).toBe('completed');
    expect(done.progress).toBeUndefined(); // shown while processing only
    const segs = done.result.segments;
    // One segment per utterance (or so), each with its own times, in recording order, none spanning a piece.
    expect(segs.length).toBeGreaterThanOrEqual(12);
    for (let i = 1; i < segs.length; i++) expect(segs[i]!.start).toBeGreaterThanOrEqual(segs[i - 1]!.end - 0.01);
    for (const s of segs) expect(s.end - s.start).toBeLessThanOrEqual(30);
    expect(segs[segs.length - 1]!.end).toBeGreaterThan(seconds * 0.85);
    expect(done.result.text).toMatch(/call me back.*hospital.*straight/);
    // The job wrote how far it had got as it went (the last write is kept on the row).
    const row = await loadTranscriptionJob(p.infra.db, id);
    expect(row?.progress?.totalSeconds).toBeCloseTo(seconds, 0);
    expect(row?.progress?.doneSeconds).toBeGreaterThan(0);
  }, 600_000);
});
