import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

let p: TestPlatform;
let dist: string;
const INDEX = '<!doctype html><title>portal</title><script type="module" src="/portal/assets/app-3f9a.js"></script>';
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; " +
  "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

beforeAll(async () => {
  // A small fake build: index.html, a hashed asset with .br and .gz siblings (distinct contents, so a test can
  // tell which file was served after fetch decodes it), and a plain file at the root.
  dist = await mkdtemp(join(tmpdir(), 'vap-portal-dist-'));
  await mkdir(join(dist, 'assets'));
  await writeFile(join(dist, 'index.html'), INDEX);
  await writeFile(join(dist, 'assets/app-3f9a.js'), 'console.log("plain")');
  await writeFile(join(dist, 'assets/app-3f9a.js.br'), brotliCompressSync('console.log("br")'));
  await writeFile(join(dist, 'assets/app-3f9a.js.gz'), gzipSync('console.log("gz")'));
  await writeFile(join(dist, 'assets/app-77c1.css'), 'body{}');
  await writeFile(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  p = await startTestPlatform({ roles: ['api'], env: { PORTAL_DIST_DIR: dist } });
}, 120_000);

afterAll(async () => {
  await p?.close();
  await rm(dist, { recursive: true, force: true });
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(p.url + path, { headers });

function expectSecurityHeaders(res: Response): void {
  expect(res.headers.get('content-security-policy')).toBe(CSP);
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('referrer-policy')).toBe('same-origin');
}

describe('portal static assets', () => {
  it('serves index.html for /portal, /portal/ and client routes, never stored (no-store: Back after sign-out refetches it)', async () => {
    for (const path of ['/portal', '/portal/', '/portal/login', '/portal/calls/ses_01abc', '/portal/agents/agt_1']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expectSecurityHeaders(res);
      expect(await res.text()).toBe(INDEX);
    }
  });

  it('answers a matching ETag with 304', async () => {
    const first = await get('/portal/');
    const etag = first.headers.get('etag')!;
    expect(etag).toBeTruthy();
    const again = await get('/portal/keys', { 'if-none-match': etag });
    expect(again.status).toBe(304);
  });

  it('serves hashed assets for a year, immutable, choosing the precompressed sibling by Accept-Encoding', async () => {
    const cases: Array<[string, string | null, string]> = [
      ['br, gzip', 'br', 'console.log("br")'],
      ['gzip, deflate', 'gzip', 'console.log("gz")'],
      ['gzip;q=0, br;q=0', null, 'console.log("plain")'],
      ['identity', null, 'console.log("plain")'],
    ];
    for (const [accept, encoding, body] of cases) {
      const res = await get('/portal/assets/app-3f9a.js', { 'accept-encoding': accept });
      expect(res.status, accept).toBe(200);
      expect(res.headers.get('content-encoding')).toBe(encoding);
      expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('vary')).toContain('Accept-Encoding');
      expectSecurityHeaders(res);
      expect(await res.text()).toBe(body);
    }
    const css = await get('/portal/assets/app-77c1.css');
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await get('/portal/favicon.svg')).headers.get('cache-control')).toBe('no-cache');
  });

  it('answers a missing asset 404, not index.html', async () => {
    const res = await get('/portal/assets/app-gone.js');
    expect(res.status).toBe(404);
    expectSecurityHeaders(res);
    expect((await get('/portal/robots.txt')).status).toBe(404);
  });

  it('never serves a file outside the build folder', async () => {
    // fetch normalises "..", so send the raw request line.
    const body = await new Promise<string>((resolve, reject) => {
      const u = new URL(p.url);
      const req = request({ host: u.hostname, port: u.port, path: '/portal/%2e%2e/%2e%2e/package.json' }, (res) => {
        let s = '';
        res.on('data', (c: Buffer) => (s += c.toString()));
        res.on('end', () => resolve(s));
      });
      req.on('error', reject);
      req.end();
    });
    expect(body).not.toContain('"dependencies"');
  });

  it('keeps /portal/api paths out of the SPA fallback', async () => {
    const res = await get('/portal/api/unknown');
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('portal_session_required');
    expectSecurityHeaders(res);
  });

  it('says how to build the portal when there is no build', async () => {
    await rename(join(dist, 'index.html'), join(dist, 'index.html.off'));
    try {
      const page = await get('/portal/', { accept: 'text/html,application/xhtml+xml' });
      expect(page.status).toBe(503);
      expect(await page.text()).toContain('npm run setup');
      expectSecurityHeaders(page);
      const json = await get('/portal/');
      expect(json.status).toBe(503);
      expect(((await json.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'feature_not_configured',
        message: expect.stringContaining('not built'),
      });
    } finally {
      await rename(join(dist, 'index.html.off'), join(dist, 'index.html'));
    }
  });
});
