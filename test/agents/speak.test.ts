import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

const run = promisify(execFile);
let p: TestPlatform;
let dev: { apiKey: string };
let dir: string;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'] });
  dev = await p.developer('pro');
  dir = await mkdtemp(join(tmpdir(), 'agents-speak-'));
});
afterAll(async () => {
  await p?.close();
  await rm(dir, { recursive: true, force: true });
});

async function probe(buf: Buffer, name: string): Promise<{ codec: string; duration: number; format: string }> {
  const file = join(dir, name);
  await writeFile(file, buf);
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file]);
  const j = JSON.parse(stdout) as {
    streams: { codec_type: string; codec_name: string }[];
    format: { duration: string; format_name: string };
  };
  const audio = j.streams.find((s) => s.codec_type === 'audio')!;
  return { codec: audio.codec_name, duration: Number(j.format.duration), format: j.format.format_name };
}

describe('POST /v1/agents/:id/speak', () => {
  it.each([
    ['mp3', 'audio/mpeg', 'mp3'],
    ['wav', 'audio/wav', 'pcm_s16le'],
    ['ogg', 'audio/ogg', 'opus'],
  ])('returns decodable %s with the contract content type', async (format, type, codec) => {
    const a = (await (
      await p.request('/v1/agents', {
        method: 'POST',
        key: dev.apiKey,
        json: { name: 'Voice', styleProfile: { speed: 1.1 } },
      })
    ).json()) as { id: string };
    const res = await p.request(`/v1/agents/${a.id}/speak`, {
      method: 'POST',
      key: dev.apiKey,
      json: { text: 'Hello, thanks for calling. How can I help you today?', format },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain(type);
    expect(res.headers.get('x-provider-used')).toBe('default');
    const info = await probe(Buffer.from(await res.arrayBuffer()), `out.${format}`);
    expect(info.codec).toBe(codec);
    expect(info.duration).toBeGreaterThan(1);
    expect(info.duration).toBeLessThan(10);
  });

  it('speed changes the length; mp3 is the default format', async () => {
    const a = (await (
      await p.request('/v1/agents', { method: 'POST', key: dev.apiKey, json: { name: 'Voice' } })
    ).json()) as { id: string };
    const say = async (json: object) => {
      const res = await p.request(`/v1/agents/${a.id}/speak`, { method: 'POST', key: dev.apiKey, json });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('audio/mpeg');
      return probe(Buffer.from(await res.arrayBuffer()), 'speed.mp3');
    };
    const text = 'The quick brown fox jumps over the lazy dog near the river bank.';
    const normal = await say({ text });
    const fast = await say({ text, speed: 2 });
    expect(fast.duration).toBeLessThan(normal.duration * 0.8);
  });

  it.each([
    [{}, 'text'],
    [{ text: '' }, 'text'],
    [{ text: 'x'.repeat(10_001) }, 'text'],
    [{ text: 'hi', format: 'flac' }, 'format'],
    [{ text: 'hi', speed: 2.1 }, 'speed'],
    [{ text: 'hi', speed: 0.4 }, 'speed'],
  ])('400 for a bad speak body #%#', async (json, param) => {
    const a = (await (
      await p.request('/v1/agents', { method: 'POST', key: dev.apiKey, json: { name: 'V' } })
    ).json()) as { id: string };
    const res = await p.request(`/v1/agents/${a.id}/speak`, { method: 'POST', key: dev.apiKey, json });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe(param);
  });
});
