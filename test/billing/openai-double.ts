import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/**
 * A local double of the OpenAI API's two calls billing needs to see: GET /v1/models (the cheapest authenticated
 * call, used to verify a key) and POST /v1/embeddings (a metered call made with a resolved key). Keys in
 * `validKeys` are accepted; every Authorization header received is recorded.
 */
export async function startOpenAiDouble(validKeys: Set<string>): Promise<{
  url: string;
  authorizations: string[];
  close(): Promise<void>;
}> {
  const authorizations: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const auth = String(req.headers.authorization ?? '');
      authorizations.push(auth);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const key = auth.replace(/^Bearer /, '');
      if (!validKeys.has(key)) {
        return send(401, {
          error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' },
        });
      }
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'GET' && path === '/v1/models') {
        return send(200, {
          object: 'list',
          data: [{ id: 'gpt-4o-mini', object: 'model', created: 0, owned_by: 'openai' }],
        });
      }
      if (req.method === 'POST' && path === '/v1/embeddings') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          input: string[];
          model: string;
          dimensions?: number;
        };
        const dims = body.dimensions ?? 1536;
        const data = body.input.map((text, index) => ({ object: 'embedding', index, embedding: vectorOf(text, dims) }));
        return send(200, { object: 'list', data, model: body.model, usage: { prompt_tokens: 10, total_tokens: 10 } });
      }
      send(404, { error: { message: 'not found', type: 'invalid_request_error' } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    authorizations,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A deterministic unit vector per text. */
function vectorOf(text: string, dims: number): number[] {
  const seed = createHash('sha256').update(text).digest();
  const v = Array.from({ length: dims }, (_, i) => (seed[i % seed.length]! - 127.5) / 127.5 + Math.sin(i));
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}
