import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * OpenAI Chat Completions streaming (`POST /v1/chat/completions`, `stream: true`) with a declared latency profile:
 * the first token `firstTokenMs` after the request, then `tokensPerSecond`; a "token" here is one word (with its
 * space), which is close to the tokenizer for plain English. Optional tool calls come before the text, as the model
 * would answer a tool-using turn. Records request bodies.
 */
export interface LlmProfile {
  firstTokenMs: number;
  tokensPerSecond: number;
}

export interface ScriptedTurn {
  text?: string;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
  /** Answer with this HTTP status and an OpenAI error body instead. */
  status?: number;
}

export interface OpenAiChatDouble {
  url: string;
  key: string;
  requests: Array<Record<string, unknown>>;
  /** Requests whose client went away before the answer finished (cancelled turns). */
  aborted: number;
  close(): Promise<void>;
}

export async function startOpenAiChatDouble(
  script: (body: Record<string, unknown>, index: number) => ScriptedTurn,
  profile: Partial<LlmProfile> = {},
): Promise<OpenAiChatDouble> {
  const p: LlmProfile = { firstTokenMs: 0, tokensPerSecond: 1000, ...profile };
  const key = 'sk-test-realtime';
  const d: OpenAiChatDouble = { url: '', key, requests: [], aborted: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${key}`) {
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            error: { message: 'Incorrect API key', type: 'invalid_request_error', code: 'invalid_api_key' },
          }),
        );
      }
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown>;
      const index = d.requests.push(body) - 1;
      const turn = script(body, index);
      if (turn.status) {
        res.writeHead(turn.status, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'scripted failure', type: 'server_error', code: null } }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const base = {
        id: `chatcmpl-${index}`,
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: body.model,
      };
      const send = (o: unknown) => !res.writableEnded && res.write(`data: ${JSON.stringify(o)}\n\n`);
      let timer: NodeJS.Timeout | null = null;
      let finished = false;
      res.on('close', () => {
        if (timer) clearTimeout(timer);
        if (!finished) d.aborted++;
      });
      const tokens = (turn.text ?? '').match(/\S+\s*/g) ?? [];
      const step = 1000 / p.tokensPerSecond;
      // One chain of timers, each scheduled from the start time: events stay in order even when the event loop
      // is late (timers of different durations may fire out of order after a stall).
      const t0 = performance.now();
      const events: Array<{ at: number; run: () => void }> = [
        {
          at: p.firstTokenMs,
          run: () => {
            send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
            (turn.toolCalls ?? []).forEach((tc, i) =>
              send({
                ...base,
                choices: [
                  {
                    index: 0,
                    delta: {
                      tool_calls: [
                        {
                          index: i,
                          id: `call_${index}_${i}`,
                          type: 'function',
                          function: { name: tc.name, arguments: JSON.stringify(tc.arguments) },
                        },
                      ],
                    },
                    finish_reason: null,
                  },
                ],
              }),
            );
          },
        },
        ...tokens.map((tok, i) => ({
          at: p.firstTokenMs + i * step,
          run: () => send({ ...base, choices: [{ index: 0, delta: { content: tok }, finish_reason: null }] }),
        })),
        {
          at: p.firstTokenMs + tokens.length * step,
          run: () => {
            send({
              ...base,
              choices: [{ index: 0, delta: {}, finish_reason: turn.toolCalls?.length ? 'tool_calls' : 'stop' }],
            });
            send({
              ...base,
              choices: [],
              usage: { prompt_tokens: 50, completion_tokens: tokens.length, total_tokens: 50 + tokens.length },
            });
            res.write('data: [DONE]\n\n');
            finished = true;
            res.end();
          },
        },
      ];
      const next = () => {
        const now = performance.now() - t0;
        while (events.length && events[0]!.at <= now) events.shift()!.run();
        if (events.length) timer = setTimeout(next, Math.max(0, events[0]!.at - (performance.now() - t0)));
      };
      next();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  d.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  d.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return d;
}
