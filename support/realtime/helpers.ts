import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { resamplePcm } from '../../shared/kernel/audio/resampler.ts';
import { parseWav } from '../../shared/kernel/audio/wav.ts';

const run = promisify(execFile);
const cache = new Map<string, Buffer>();

/**
 * A spoken utterance made by flite, as 8 kHz PCM s16le (what a phone line carries), with 0 padding trimmed. `voice`
 * is a flite voice (default its own 8 kHz `kal`; `kal16` is the one pocketsphinx hears best, sent at `rate` too).
 */
export async function fliteUtterance(text: string, rate = 8000, voice?: string): Promise<Buffer> {
  const k = `${rate}:${voice ?? ''}:${text}`;
  const hit = cache.get(k);
  if (hit) return hit;
  const dir = await mkdtemp(join(tmpdir(), 'rt-flite-'));
  try {
    const file = join(dir, 'u.wav');
    await run('flite', [...(voice ? ['-voice', voice] : []), '-t', text, '-o', file]);
    const wav = parseWav(await readFile(file));
    const pcm = resamplePcm(Buffer.from(wav.data), wav.sampleRate, rate);
    cache.set(k, pcm);
    return pcm;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export { tokenFromTwiml, wsUrl } from '../../shared/domains/agent-tests/twilio-caller.ts';

/** RMS of s16le PCM. */
export function rms(pcm: Buffer): number {
  const n = pcm.length >> 1;
  let s = 0;
  for (let i = 0; i < n; i++) s += pcm.readInt16LE(i * 2) ** 2;
  return Math.sqrt(s / Math.max(1, n));
}

/**
 * The platform env of a voice test: Deepgram live and OpenAI chat at their doubles, a fixed session secret, the
 * public URL Twilio is told to call back, and outbound requests allowed to the local doubles.
 */
export function voicePlatformEnv(
  dg: { url: string; key: string },
  llm: { baseUrl: string; key: string },
): Record<string, string> {
  return {
    PUBLIC_BASE_URL: 'https://voice.example.com',
    REALTIME_SESSION_SECRET: 'test-secret-test-secret-test-secret-42',
    DEEPGRAM_BASE_URL: dg.url,
    DEEPGRAM_API_KEY: dg.key,
    OPENAI_BASE_URL: llm.baseUrl,
    OPENAI_API_KEY: llm.key,
    OUTBOUND_ALLOWLIST: '127.0.0.1',
  };
}
