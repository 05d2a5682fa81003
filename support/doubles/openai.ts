import { createHash } from 'node:crypto';
import { parseWav, split, tone } from './audio.ts';
import {
  expectShape,
  formDataOf,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { scriptedWords, SCRIPT } from '../../shared/domains/agent-tests/simulators/transcript.ts';

export interface OpenAiDoubleOptions {
  /** Names the double (and its default key); `openai` unless another vendor speaks the protocol. */
  name?: string;
  /** Where the API lives: `/v1` for OpenAI. */
  prefix?: string;
  /** Bearer keys the double accepts, instead of its single `key`. */
  keys?: Iterable<string>;
  /** The embedding of a text in `dims` dimensions (default: a deterministic unit vector per text). */
  vector?: (text: string, dims: number) => number[];
}

/**
 * The OpenAI REST API (also Groq's, under `/openai/v1`): `GET {prefix}/models` (the cheapest authenticated call,
 * used to verify a key), `POST {prefix}/embeddings` (data returned out of order, so clients must place vectors by
 * `index`), `POST {prefix}/audio/speech` (`response_format: pcm` streams 24 kHz s16le) and
 * `POST {prefix}/audio/transcriptions` (multipart → verbose_json). Bearer auth; errors
 * `{error: {message, type, param, code}}`.
 */
export function startOpenAiDouble(opts: OpenAiDoubleOptions = {}): Promise<HttpDouble> {
  const { name = 'openai', prefix = '/v1', vector = unitVector } = opts;
  const keys = opts.keys && new Set(opts.keys);
  return startHttpDouble({
    name,
    errorBody: (status, message) => ({
      body: JSON.stringify({
        error: {
          message,
          type: status === 401 ? 'invalid_request_error' : status === 429 ? 'rate_limit_exceeded' : 'server_error',
          param: null,
          code: status === 401 ? 'invalid_api_key' : null,
        },
      }),
    }),
    authorize: (req, d) => {
      const auth = String(req.headers.authorization ?? '');
      return keys ? auth.startsWith('Bearer ') && keys.has(auth.slice(7)) : auth === `Bearer ${d.key}`;
    },
    async route(req, res, d) {
      if (req.method === 'GET' && req.path === `${prefix}/models`) {
        d.sendJson(res, 200, {
          object: 'list',
          data: [{ id: 'gpt-4o-mini', object: 'model', created: 0, owned_by: 'openai' }],
        });
        return true;
      }
      if (req.method === 'POST' && req.path === `${prefix}/embeddings`) {
        const body = d.json(req);
        expectShape(typeof body.model === 'string', 'model');
        expectShape(Array.isArray(body.input), 'input');
        const dims =
          typeof body.dimensions === 'number' ? body.dimensions : body.model === 'text-embedding-3-large' ? 3072 : 1536;
        const data = (body.input as string[]).map((text, index) => ({
          object: 'embedding',
          index,
          embedding: vector(text, dims),
        }));
        d.sendJson(res, 200, {
          object: 'list',
          data: data.reverse(),
          model: body.model,
          usage: { prompt_tokens: 10, total_tokens: 10 },
        });
        return true;
      }
      if (req.method === 'POST' && req.path === `${prefix}/audio/speech`) {
        const body = d.json(req);
        expectShape(typeof body.model === 'string', 'model');
        expectShape(typeof body.input === 'string' && body.input, 'input');
        expectShape(typeof body.voice === 'string', 'voice');
        expectShape(body.response_format === 'pcm', 'response_format pcm');
        await d.stream(res, split(tone(24000, 0.3)), 'audio/pcm');
        return true;
      }
      if (req.method === 'POST' && req.path === `${prefix}/audio/transcriptions`) {
        const form = await formDataOf(req);
        expectShape(typeof form.get('model') === 'string', 'model');
        const file = form.get('file');
        expectShape(file instanceof Blob, 'file');
        expectShape(form.get('response_format') === 'verbose_json', 'response_format verbose_json');
        const { sampleRate, pcm } = parseWav(Buffer.from(await file.arrayBuffer()));
        const duration = pcm.length / 2 / sampleRate;
        const words = scriptedWords(duration);
        const granularities = form.getAll('timestamp_granularities[]');
        const half = Math.ceil(words.length / 2);
        d.sendJson(res, 200, {
          task: 'transcribe',
          language: 'english',
          duration,
          text: SCRIPT,
          ...(granularities.includes('segment')
            ? {
                segments: [words.slice(0, half), words.slice(half)].map((ws, id) => ({
                  id,
                  seek: 0,
                  start: ws[0]!.start,
                  end: ws.at(-1)!.end,
                  text: ` ${ws.map((w) => w.word).join(' ')}`,
                  tokens: [1, 2, 3],
                  temperature: 0,
                  avg_logprob: -0.2,
                  compression_ratio: 1.1,
                  no_speech_prob: 0.01,
                })),
              }
            : {}),
          ...(granularities.includes('word')
            ? { words: words.map((w) => ({ word: w.word, start: w.start, end: w.end })) }
            : {}),
          usage: { type: 'duration', seconds: Math.ceil(duration) },
        });
        return true;
      }
      return false;
    },
  });
}

/** Groq's OpenAI-compatible endpoints live under `/openai/v1`. */
export function startGroqDouble(): Promise<HttpDouble> {
  return startOpenAiDouble({ name: 'groq', prefix: '/openai/v1' });
}

/** A deterministic unit vector per text. */
function unitVector(text: string, dims: number): number[] {
  const seed = createHash('sha256').update(text).digest();
  const v = Array.from({ length: dims }, (_, i) => (seed[i % seed.length]! - 127.5) / 127.5 + Math.sin(i));
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}
