import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../kernel/errors/api-error.ts';

interface PathNode {
  parent: PathNode | null;
  key: string | number;
}

function render(node: PathNode | null): string {
  const parts: string[] = [];
  for (let n = node; n; n = n.parent) parts.unshift(typeof n.key === 'number' ? `[${n.key}]` : `.${n.key}`);
  // A NUL inside a key is shown escaped: the envelope must not carry the byte it rejects.
  return parts.join('').replace(/^\./, '').replace(/\0/g, '\\0');
}

/**
 * Deepest nesting of objects and arrays accepted in a JSON body (the top-level value is depth 1). Deeper values
 * overflowed the stack in recursive code further on (validation, serialisers, the pg driver): 500s.
 */
export const MAX_JSON_DEPTH = 64;

type Flaw = 'nul' | 'surrogate' | 'depth';

const WHY: Record<Flaw, string> = {
  nul: 'must not contain NUL (U+0000) characters',
  // A lone UTF-16 surrogate ("\ud800") is valid JSON but not Unicode text: Postgres refuses it.
  surrogate: 'must not contain lone UTF-16 surrogates (unpaired \\ud800-\\udfff escapes)',
  depth: `must not nest objects and arrays more than ${MAX_JSON_DEPTH} deep`,
};

// A high surrogate not followed by a low one, or a low one not preceded by a high one (code units: no `u` flag).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const flawOf = (s: string): Flaw | null => (s.includes('\0') ? 'nul' : LONE_SURROGATE.test(s) ? 'surrogate' : null);

/**
 * The first field (at any depth, keys included) that Postgres or our recursive code cannot take: a NUL character,
 * a lone surrogate, or nesting deeper than MAX_JSON_DEPTH. Iterative, so that a deeply nested body cannot overflow
 * the stack; paths are only built for the hit.
 */
export function findFlaw(root: unknown): { at: string; flaw: Flaw } | undefined {
  const stack: [unknown, PathNode | null, number][] = [[root, null, 0]];
  while (stack.length > 0) {
    const [v, at, depth] = stack.pop()!;
    if (typeof v === 'string') {
      const flaw = flawOf(v);
      if (flaw) return { at: render(at), flaw };
    } else if (v !== null && typeof v === 'object') {
      if (depth + 1 > MAX_JSON_DEPTH) return { at: render(at), flaw: 'depth' };
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], { parent: at, key: i }, depth + 1]);
      } else {
        for (const [k, x] of Object.entries(v)) {
          const node = { parent: at, key: k };
          const flaw = flawOf(k);
          if (flaw) return { at: render(node).replace(/[\ud800-\udfff]/g, '\\ufffd'), flaw };
          stack.push([x, node, depth + 1]);
        }
      }
    }
  }
  return undefined;
}

/** 400 `validation_failed` naming the first field (at any depth) with a NUL, a lone surrogate or too deep. */
export function rejectNul(where: 'path' | 'query' | 'body', value: unknown): void {
  const hit = findFlaw(value);
  if (hit === undefined) return;
  const param = hit.at || null;
  const name = where === 'body' ? (param ?? 'the body') : `${where} parameter ${param ?? ''}`.trim();
  throw ApiError.validation(`${name} ${WHY[hit.flaw]}`, param);
}

function hasNoBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

/**
 * Rejects NUL characters and lone surrogates in path parameters, query strings and JSON bodies, and JSON nested
 * deeper than MAX_JSON_DEPTH, with a 400 before any route runs: Postgres refuses U+0000 and unpaired surrogates in
 * text, and deep nesting overflows recursive code, so they would otherwise surface as 500s.
 * Multipart fields are checked where they are read (api/services/speech-input.ts).
 */
async function inputGuard(app: FastifyInstance): Promise<void> {
  // An empty body sent as application/json is no body (clients send the header on every POST): a route whose
  // body is optional (POST /v1/keys) can accept it, one that needs a body says which. Fastify's default is a 400.
  // The header is dropped rather than the JSON parser replaced, since areas add their own JSON parsers. A request
  // with neither Content-Length nor Transfer-Encoding has no body either (RFC 9112 §6.3): `curl -X DELETE -H
  // 'Content-Type: application/json'` sends exactly that.
  app.addHook('onRequest', (req, _reply, done) => {
    if (req.headers['content-type']?.startsWith('application/json') && hasNoBody(req.headers)) {
      delete req.headers['content-type'];
    }
    done();
  });

  app.addHook('preValidation', (req, _reply, done) => {
    try {
      rejectNul('path', req.params);
      rejectNul('query', req.query);
      if (req.body != null && !Buffer.isBuffer(req.body)) rejectNul('body', req.body);
      done();
    } catch (e) {
      done(e as Error);
    }
  });
}

export const inputGuardPlugin = fp(inputGuard, { name: 'input-guard', dependencies: ['error-handler'] });
