import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav } from '../../shared/kernel/audio/wav.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { Writable } from 'node:stream';

const lines: string[] = [];
let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform({ roles: ['api'], logLines: lines });
});
afterAll(() => p?.close());

describe('log redaction', () => {
  it('keeps API keys and per-request vendor keys out of trace-level logs, wherever headers are logged', async () => {
    const { apiKey } = await p.developer('pro');
    const vendorKey = 'sk-vendor-' + randomBytes(12).toString('hex');
    const form = new FormData();
    form.append('file', new Blob([encodeWav(Buffer.alloc(3200), 16000)], { type: 'audio/wav' }), 'quiet.wav');
    form.append('model', 'whisper-1');
    // A multipart upload: @fastify/multipart logs its busboy options, headers included, at trace level.
    const res = await fetch(`${p.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'x-provider-key-openai': vendorKey, cookie: `s=${vendorKey}` },
      body: form,
    });
    expect(res.status).toBeLessThan(500);
    const all = lines.join('');
    expect(all).toContain('busboyOptions'); // the headers were logged …
    expect(all).toContain('[redacted]'); // … with the secrets censored
    expect(all).not.toContain(apiKey);
    expect(all).not.toContain(apiKey.slice(4, 20));
    expect(all).not.toContain(vendorKey);
  });

  it('redacts every vendor key header and the authorization header at any depth it is logged at', () => {
    const out: string[] = [];
    const log = createLogger('info', {}, new Writable({ write: (c: Buffer, _e, cb) => (out.push(String(c)), cb()) }));
    const headers = {
      authorization: 'Bearer vap_secret',
      'x-provider-key-elevenlabs': 'el_secret',
      'x-provider-key-anthropic': 'ant_secret',
      'content-type': 'application/json',
    };
    log.info({ headers, req: { headers }, options: { headers }, deep: { opts: { headers } } }, 'headers');
    expect(out.join('')).not.toMatch(/vap_secret|el_secret|ant_secret/);
    expect(out.join('')).toContain('application/json');
  });
});
