import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toVideoFailure } from '../../shared/domains/video/failure.ts';
import { ffmpeg } from '../../shared/kernel/media/ffmpeg.ts';
import { isToolFailure } from '../../shared/kernel/media/tool-failure.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/** Issue #24 finding 7: failed-job errors showed worker temp paths; the unauthenticated /readyz named hosts, ports. */
describe('failed-job errors', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vap-leak-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("a tool's failure on an unreadable input says why without the worker's temp path", async () => {
    const input = join(dir, 'audio.wav');
    await writeFile(input, 'this is not audio at all');
    const err = await ffmpeg(['-i', input, '-f', 'null', '-'], { inputFault: true }).catch((e: unknown) => e);
    // The kernel's helper says what failed in no domain's terms; the video job maps it to its contract code.
    expect(isToolFailure(err) && err.kind).toBe('unreadable');
    const { code, message } = toVideoFailure(err, false);
    expect(code).toBe('input_unreadable');
    expect(message).toMatch(/could not be decoded/);
    expect(message).not.toContain(dir);
    expect(message).not.toContain(tmpdir());
    expect(message).toContain('<path>');
  });
});

describe('/readyz', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ roles: ['api'] });
  });
  afterAll(() => p?.close());

  it('names the failing dependency without its error text, hosts or ports', async () => {
    const endpoint = new URL(p.infra.embeddedS3!.endpoint);
    await p.infra.embeddedS3!.close();
    const res = await fetch(`${p.url}/readyz`);
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      status: 'unavailable',
      checks: { postgres: 'ok', redis: 'ok', s3: 'unavailable' },
    });
    expect(text).not.toContain(endpoint.port);
    expect(text).not.toContain('127.0.0.1');
  });
});
