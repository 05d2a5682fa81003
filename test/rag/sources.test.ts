import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import { call, createCollection, ingest, search, type ErrorBody } from './helpers.ts';

const run = promisify(execFile);

const PAGE = `<!doctype html><html><head><title>Lighthouse keeping</title>
<style>.menu { display: none }</style><script>window.tracking = "SECRETSCRIPT";</script></head>
<body><nav><a href="/">Home</a> <a href="/shop">NAVIGATIONLINK shop</a></nav>
<article><h1>The lighthouse keeper's duties</h1>
<p>Each evening the keeper climbed the tower to light the lamp and wound the clockwork that turned the lens.</p>
<p>During fog the keeper sounded the foghorn every thirty seconds to warn passing ships away from the rocks.</p>
</article><footer>FOOTERTEXT all rights reserved</footer></body></html>`;

const SPOKEN = 'The lighthouse keeper lit the lamp every evening. Ships stayed away from the dangerous rocks.';

let p: TestPlatform;
let key: string;
let server: Server;
let base: string;
let wav: Buffer;

beforeAll(async () => {
  const file = join(tmpdir(), `rag-speech-${process.pid}.wav`);
  await run('flite', ['-voice', 'slt', '-t', SPOKEN, '-o', file]);
  wav = await readFile(file);
  await rm(file, { force: true });
  server = createServer((req, res) => {
    switch (req.url) {
      case '/page.html':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end(PAGE);
      case '/notes.txt':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('Plain notes about tide tables and harbour pilots.');
      case '/huge.html':
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end(`<p>${'word '.repeat(220_000)}</p>`);
      case '/image.png':
        res.writeHead(200, { 'content-type': 'image/png' });
        return res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      case '/redirect':
        res.writeHead(302, { location: '/page.html' });
        return res.end();
      case '/speech.wav':
        res.writeHead(200, { 'content-type': 'audio/wav' });
        return res.end(wav);
      case '/noise.wav':
        res.writeHead(200, { 'content-type': 'audio/wav' });
        return res.end(Buffer.from('this is not audio at all'));
      default:
        res.writeHead(404);
        return res.end('missing');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  p = await startTestPlatform({ roles: ['api'], env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  key = (await p.developer('scale')).apiKey;
});
afterAll(async () => {
  await p?.close();
  await new Promise<void>((r) => server?.close(() => r()));
});

describe('url ingest', () => {
  it('fetches a page and keeps its readable text only', async () => {
    const id = await createCollection(p, key);
    const out = await ingest(p, key, id, {
      contentType: 'url',
      sourceUrl: `${base}/page.html`,
      metadata: { kind: 'web' },
    });
    expect(out.chunksCreated).toBe(1);
    const [hit] = await search(p, key, id, { query: 'What did the keeper do during fog?' });
    expect(hit).toBeDefined();
    expect(hit!.content).toContain("The lighthouse keeper's duties\n\nEach evening the keeper climbed the tower");
    expect(hit!.content).toContain('foghorn every thirty seconds');
    for (const junk of ['SECRETSCRIPT', 'NAVIGATIONLINK', 'FOOTERTEXT', 'display', '<p>']) {
      expect(hit!.content).not.toContain(junk);
    }
    expect(hit!.metadata).toEqual({ sourceUrl: `${base}/page.html`, title: 'Lighthouse keeping', kind: 'web' });
  });

  it('follows redirects, reads plain text, and takes the URL from content too', async () => {
    const id = await createCollection(p, key);
    expect((await ingest(p, key, id, { contentType: 'url', sourceUrl: `${base}/redirect` })).chunksCreated).toBe(1);
    await ingest(p, key, id, { contentType: 'url', content: `${base}/notes.txt` });
    const hits = await search(p, key, id, { query: 'harbour pilots and tide tables', threshold: 0 });
    expect(hits[0]!.content).toBe('Plain notes about tide tables and harbour pilots.');
  });

  it('answers with the right error for unusable pages', async () => {
    const id = await createCollection(p, key);
    const cases: [string, number, string][] = [
      [`${base}/missing`, 400, 'url_fetch_failed'],
      [`${base}/image.png`, 415, 'unsupported_media_type'],
      [`${base}/huge.html`, 413, 'payload_too_large'],
      ['http://169.254.169.254/latest/meta-data/', 400, 'url_not_allowed'],
      ['http://10.0.0.1/internal', 400, 'url_not_allowed'],
    ];
    for (const [url, status, code] of cases) {
      const r = await call<ErrorBody>(p, key, 'POST', `/v1/collections/${id}/ingest`, {
        contentType: 'url',
        sourceUrl: url,
      });
      expect(r.status, url).toBe(status);
      expect(r.body.error.code, url).toBe(code);
    }
  });
});

describe('audio ingest', () => {
  it('transcribes fetched audio and records the time range of each chunk', async () => {
    const id = await createCollection(p, key);
    const out = await ingest(p, key, id, {
      contentType: 'audio',
      sourceUrl: `${base}/speech.wav`,
      chunkSize: 100,
      chunkOverlap: 0,
      metadata: { episode: 7 },
    });
    expect(out.chunksCreated).toBeGreaterThanOrEqual(1);
    const hits = await search(p, key, id, { query: 'lighthouse keeper lamp ships rocks', threshold: 0, limit: 100 });
    expect(hits).toHaveLength(out.chunksCreated);
    const sorted = [...hits].sort((a, b) => a.chunkIndex - b.chunkIndex);
    let lastEnd = 0;
    for (const h of sorted) {
      expect(h.content.length).toBeGreaterThan(0);
      const m = h.metadata as {
        startTime: number;
        endTime: number;
        sourceUrl: string;
        episode: number;
        duration: number;
      };
      expect(m.episode).toBe(7);
      expect(m.sourceUrl).toBe(`${base}/speech.wav`);
      expect(m.endTime).toBeGreaterThan(m.startTime);
      expect(m.startTime).toBeGreaterThanOrEqual(lastEnd - 0.5);
      expect(m.endTime).toBeLessThanOrEqual(m.duration + 0.01);
      lastEnd = m.endTime;
    }
    // The recogniser hears the speech: at least some of the spoken content words come back.
    const transcript = sorted
      .map((h) => h.content)
      .join(' ')
      .toLowerCase();
    const heard = ['lighthouse', 'keeper', 'lamp', 'evening', 'ships', 'away', 'dangerous', 'rocks'].filter((w) =>
      transcript.includes(w),
    );
    process.stdout.write(`audio ingest transcript: ${transcript}\n`);
    expect(heard.length).toBeGreaterThanOrEqual(2);
  });

  it('rejects what is not audio, and private addresses', async () => {
    const id = await createCollection(p, key);
    const bad = await call<ErrorBody>(p, key, 'POST', `/v1/collections/${id}/ingest`, {
      contentType: 'audio',
      sourceUrl: `${base}/noise.wav`,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_audio');
    const ssrf = await call<ErrorBody>(p, key, 'POST', `/v1/collections/${id}/ingest`, {
      contentType: 'audio',
      sourceUrl: 'http://192.168.1.10/a.wav',
    });
    expect(ssrf.status).toBe(400);
    expect(ssrf.body.error.code).toBe('url_not_allowed');
  });
});
