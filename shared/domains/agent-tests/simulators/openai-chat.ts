import { performance } from 'node:perf_hooks';
import { pieces, startDouble, type Double } from './http-double.ts';
import type { LlmScript } from './llm-script.ts';

export interface OpenAiChatOptions {
  /** When set, requests must carry `Authorization: Bearer <key>` (else 401 `invalid_api_key`, as OpenAI answers). */
  key?: string;
  /** Usage rides in `x_groq.usage` on the last chunk instead of a usage chunk, as Groq sends it. */
  groq?: boolean;
  /** Latency profile: the first chunk this long after the request… */
  firstTokenMs?: number;
  /** …then this many words per second. Unset: the whole answer at once. */
  tokensPerSecond?: number;
}

export interface OpenAiChatDouble extends Double {
  /** What an OpenAI client takes as its base URL (`<url>/v1`). */
  baseUrl: string;
  key: string;
  /** Streams whose client went away before the answer finished (cancelled turns). */
  aborted: number;
}

/**
 * The one OpenAI Chat Completions double (`POST /v1/chat/completions`, `stream: true`): `data:
 * {chat.completion.chunk}` lines with a role chunk, text deltas (a word each), tool calls fragmented by index (id
 * and name first, arguments in pieces), finish_reason, a usage chunk with empty choices when
 * `stream_options.include_usage` is set (or `x_groq.usage` with `groq`), then `data: [DONE]`. An optional latency
 * profile spaces the chunks out; scripted errors answer with OpenAI's error body.
 */
export async function startOpenAiChatDouble(
  script: LlmScript,
  opts: OpenAiChatOptions = {},
): Promise<OpenAiChatDouble> {
  const key = opts.key ?? 'sk-test-openai';
  const counters = { aborted: 0 };
  const double = await startDouble((rec, res, index) => {
    const error = (status: number, body: unknown) =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (rec.method !== 'POST' || !rec.path.endsWith('/chat/completions')) {
      return error(404, { error: { message: 'not found', type: 'invalid_request_error' } });
    }
    if (opts.key && rec.headers.authorization !== `Bearer ${opts.key}`) {
      return error(401, {
        error: { message: 'Incorrect API key', type: 'invalid_request_error', code: 'invalid_api_key' },
      });
    }
    const body = rec.json as Record<string, unknown>;
    const reply = script(body, index);
    if (reply.status) {
      return error(
        reply.status,
        reply.errorBody ?? { error: { message: 'scripted failure', type: 'server_error', code: null } },
      );
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const base = {
      id: `chatcmpl-${index}`,
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: body.model,
    };
    const send = (o: unknown) => !res.writableEnded && res.write(`data: ${JSON.stringify(o)}\n\n`);
    const choice = (delta: unknown, finish: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const words = (reply.text ?? '').match(/\S+\s*/g) ?? [];
    const usage = {
      prompt_tokens: reply.usage?.input ?? 11,
      completion_tokens: reply.usage?.output ?? Math.max(1, words.length),
      total_tokens: (reply.usage?.input ?? 11) + (reply.usage?.output ?? Math.max(1, words.length)),
    };
    const finish = reply.toolCalls?.length ? 'tool_calls' : 'stop';
    const first = opts.firstTokenMs ?? 0;
    const step = opts.tokensPerSecond ? 1000 / opts.tokensPerSecond : 0;
    const events: { at: number; run: () => void }[] = [
      {
        at: first,
        run: () => {
          send(choice({ role: 'assistant', content: '' }));
          (reply.toolCalls ?? []).forEach((tc, i) => {
            const call = {
              index: i,
              id: `call_${index}_${i}`,
              type: 'function',
              function: { name: tc.name, arguments: '' },
            };
            send(choice({ tool_calls: [call] }));
            for (const p of pieces(JSON.stringify(tc.arguments), 5)) {
              send(choice({ tool_calls: [{ index: i, function: { arguments: p } }] }));
            }
          });
        },
      },
      ...words.map((w, i) => ({ at: first + i * step, run: () => send(choice({ content: w })) })),
      {
        at: first + words.length * step,
        run: () => {
          if (opts.groq) send({ ...choice({}, finish), x_groq: { id: 'req_1', usage } });
          else {
            send(choice({}, finish));
            const so = body.stream_options as { include_usage?: boolean } | undefined;
            if (so?.include_usage) send({ ...base, choices: [], usage });
          }
          res.end('data: [DONE]\n\n');
        },
      },
    ];
    let timer: NodeJS.Timeout | null = null;
    res.on('close', () => {
      if (timer) clearTimeout(timer);
      if (!res.writableFinished) counters.aborted++;
    });
    // One chain of timers, each scheduled from the start time: chunks stay in order even when the event loop is
    // late (timers of different durations may fire out of order after a stall).
    const t0 = performance.now();
    const next = () => {
      const now = performance.now() - t0;
      while (events.length && events[0]!.at <= now) events.shift()!.run();
      if (events.length) timer = setTimeout(next, Math.max(0, events[0]!.at - (performance.now() - t0)));
    };
    next();
  });
  return {
    url: double.url,
    requests: double.requests,
    close: double.close,
    baseUrl: `${double.url}/v1`,
    key,
    get aborted() {
      return counters.aborted;
    },
  };
}
