import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../shared/kernel/errors/api-error.ts';
import { sendApiError } from '../../shared/composition/http/errors.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};
const IMMUTABLE = 'public, max-age=31536000, immutable';

const NOT_BUILT_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Portal not built</title></head>
<body><h1>The developer portal is not built</h1>
<p>This server has no built portal in its PORTAL_DIST_DIR. Run the set-up (<code>npm run setup</code>, or
<code>npm run up</code>), which builds it into <code>portal/dist/</code>, then reload this page.</p>
<p>The API itself works: see <a href="/docs">/docs</a>.</p></body></html>
`;

type Unknown = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

interface Found {
  path: string;
  size: number;
  mtimeMs: number;
  encoding: 'br' | 'gzip' | null;
}

async function fileAt(path: string): Promise<{ size: number; mtimeMs: number } | null> {
  try {
    const s = await stat(path);
    return s.isFile() ? { size: s.size, mtimeMs: s.mtimeMs } : null;
  } catch {
    return null;
  }
}

/** Codings the client accepts (a q=0 entry refuses one). */
function accepted(req: FastifyRequest): Set<string> {
  const out = new Set<string>();
  for (const part of String(req.headers['accept-encoding'] ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)/.exec(p)?.[1]).find(Boolean);
    if (name && (q === undefined || Number(q) > 0)) out.add(name);
  }
  return out;
}

/** The file, or its .br / .gz sibling written by the build when the client takes that coding. */
async function find(path: string, req: FastifyRequest): Promise<Found | null> {
  const codings = accepted(req);
  for (const [suffix, encoding] of [
    ['.br', 'br'],
    ['.gz', 'gzip'],
  ] as const) {
    if (!codings.has(encoding)) continue;
    const s = await fileAt(path + suffix);
    if (s) return { path: path + suffix, ...s, encoding };
  }
  const s = await fileAt(path);
  return s ? { path, ...s, encoding: null } : null;
}

function send(req: FastifyRequest, reply: FastifyReply, f: Found, type: string, cache: string): FastifyReply {
  const etag = `"${f.size.toString(36)}-${Math.floor(f.mtimeMs).toString(36)}${f.encoding ? `-${f.encoding}` : ''}"`;
  reply.header('cache-control', cache).header('vary', 'Accept-Encoding').header('etag', etag).type(type);
  if (f.encoding) reply.header('content-encoding', f.encoding);
  if (req.headers['if-none-match'] === etag) return reply.code(304).send();
  reply.header('content-length', f.size);
  return reply.send(createReadStream(f.path));
}

/**
 * The built portal (PORTAL_DIST_DIR) under /portal/: hashed assets cached for a year, index.html never stored, the build's precompressed .br/.gz siblings chosen by Accept-Encoding, and index.html for every
 * other path (client-side routes). Without a build, a 503 that says how to make one.
 */
export function registerPortalStatic(app: FastifyInstance, apiNotFound: Unknown): void {
  const dist = resolve(app.infra.config.PORTAL_DIST_DIR);

  async function serve(req: FastifyRequest, reply: FastifyReply, rel: string): Promise<unknown> {
    if (rel === 'api' || rel.startsWith('api/')) return apiNotFound(req, reply);
    const index = await find(resolve(dist, 'index.html'), req);
    if (!index) {
      reply.header('cache-control', 'no-store');
      if (!String(req.headers.accept ?? '').includes('text/html')) {
        return sendApiError(
          reply,
          new ApiError('feature_not_configured', {
            detail: 'The developer portal is not built. Run the set-up (npm run setup), which builds portal/dist.',
          }),
        );
      }
      return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT_HTML);
    }
    const target = resolve(dist, rel);
    const inside = target.startsWith(dist + sep);
    const isAsset = rel.startsWith('assets/');
    // A path with an extension names a file: a missing one is a 404, never index.html (a stale hashed asset
    // answered with HTML fails in confusing ways).
    if (inside && (isAsset || extname(rel))) {
      const f = await find(target, req);
      if (f)
        return send(req, reply, f, TYPES[extname(rel)] ?? 'application/octet-stream', isAsset ? IMMUTABLE : 'no-cache');
      return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    }
    // no-store: the page a signed-in developer saw is never kept, so Back after sign-out (the back/forward cache
    // included) loads it afresh and lands on the login page instead of showing account data.
    return send(req, reply, index, TYPES['.html']!, 'no-store');
  }

  app.get('/', { schema: { hide: true } }, (req, reply) => serve(req, reply, ''));
  // The router has already decoded the path.
  app.get('/*', { schema: { hide: true } }, (req, reply) => serve(req, reply, (req.params as { '*': string })['*']));
}

/** The CSP and security headers of every /portal response: only this origin, no inline script, no framing. */
export const PORTAL_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; " +
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};
