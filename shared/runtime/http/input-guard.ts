import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors/api-error.ts';

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
 * Where the first NUL character (U+0000) is in a parsed value, at any depth (keys included), or undefined.
 * Iterative, so that a deeply nested body cannot overflow the stack; paths are only built for the hit.
 */
export function findNul(root: unknown): string | undefined {
  const stack: [unknown, PathNode | null][] = [[root, null]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\0')) return render(at);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], { parent: at, key: i }]);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        const node = { parent: at, key: k };
        if (k.includes('\0')) return render(node);
        stack.push([x, node]);
      }
    }
  }
  return undefined;
}

/** 400 `validation_failed` naming the first field (at any depth) that holds a NUL character. */
export function rejectNul(where: 'path' | 'query' | 'body', value: unknown): void {
  const at = findNul(value);
  if (at === undefined) return;
  const param = at || null;
  const name = where === 'body' ? (param ?? 'the body') : `${where} parameter ${param ?? ''}`.trim();
  throw ApiError.validation(`${name} must not contain NUL (U+0000) characters`, param);
}

/**
 * Rejects NUL characters in path parameters, query strings and JSON bodies with a 400 before any route runs:
 * Postgres refuses U+0000 in text, so they would otherwise surface as 500s from whatever query they reached.
 * Multipart fields are checked where they are read (api/services/speech-input.ts).
 */
async function inputGuard(app: FastifyInstance): Promise<void> {
  // An empty body sent as application/json is no body (clients send the header on every POST): a route whose
  // body is optional (POST /v1/keys) can accept it, one that needs a body says which. Fastify's default is a 400.
  // The header is dropped rather than the JSON parser replaced, since areas add their own JSON parsers.
  app.addHook('onRequest', (req, _reply, done) => {
    if (req.headers['content-length'] === '0' && req.headers['content-type']?.startsWith('application/json')) {
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
