import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

/**
 * Voyage AI's embeddings API: `POST {prefix}/embeddings` with `input`, `model` and `input_type`; answers an
 * OpenAI-shaped `{object: 'list', data: [{index, embedding}], model, usage: {total_tokens}}`. Bearer auth;
 * errors `{detail}`.
 */
export function startVoyageDouble(opts: {
  key: string;
  prefix?: string;
  vector: (text: string, dims: number) => number[];
}): Promise<HttpDouble> {
  const prefix = opts.prefix ?? '/v1';
  return startHttpDouble(
    {
      name: 'voyage',
      errorBody: (_status, message) => ({ body: JSON.stringify({ detail: message }) }),
      authorize: (req, d) => req.headers.authorization === `Bearer ${d.key}`,
      route(req, res, d) {
        if (req.method !== 'POST' || req.path !== `${prefix}/embeddings`) return false;
        const body = d.json(req);
        expectShape(Array.isArray(body.input), 'input');
        const data = (body.input as string[]).map((t, index) => ({
          object: 'embedding',
          index,
          embedding: opts.vector(t, 1024),
        }));
        d.sendJson(res, 200, { object: 'list', data, model: body.model, usage: { total_tokens: 5 } });
        return true;
      },
    },
    opts.key,
  );
}
