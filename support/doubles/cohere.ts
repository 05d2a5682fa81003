import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

/**
 * Cohere's embed API: `POST {prefix}/v2/embed` with `texts`, `input_type` and `embedding_types: ['float']`;
 * answers `{id, embeddings: {float}, texts, meta: {billed_units}}`. Bearer auth; errors `{message}`.
 */
export function startCohereDouble(opts: {
  key: string;
  prefix?: string;
  vector: (text: string, dims: number) => number[];
}): Promise<HttpDouble> {
  const prefix = opts.prefix ?? '';
  return startHttpDouble(
    {
      name: 'cohere',
      errorBody: (_status, message) => ({ body: JSON.stringify({ message }) }),
      authorize: (req, d) => req.headers.authorization === `Bearer ${d.key}`,
      route(req, res, d) {
        if (req.method !== 'POST' || req.path !== `${prefix}/v2/embed`) return false;
        const body = d.json(req);
        expectShape(Array.isArray(body.texts), 'texts');
        const texts = body.texts as string[];
        d.sendJson(res, 200, {
          id: 'emb-1',
          embeddings: { float: texts.map((t) => opts.vector(t, 1024)) },
          texts,
          meta: { billed_units: { input_tokens: 5 } },
        });
        return true;
      },
    },
    opts.key,
  );
}
