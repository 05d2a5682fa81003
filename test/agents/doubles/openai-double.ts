import type { ServerResponse } from 'node:http';
import { pieces, startDouble, type Double } from './http.ts';
import type { LlmScript } from './llm-script.ts';

/**
 * A Chat Completions server speaking OpenAI's streaming wire: `data: {chat.completion.chunk}` lines with text
 * deltas, tool calls fragmented by index (id + name first, arguments in pieces), finish_reason, a usage chunk
 * with empty choices when `stream_options.include_usage` is set, then `data: [DONE]`. With `groq: true` the
 * usage rides in `x_groq.usage` on the last chunk instead, as Groq sends it.
 */
export async function startOpenAiDouble(script: LlmScript, opts: { groq?: boolean } = {}): Promise<Double> {
  return startDouble((rec, res, index) => {
    if (rec.method !== 'POST' || !rec.path.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { message: 'not found' } }));
    }
    const body = rec.json as Record<string, unknown>;
    const reply = script(body, index);
    if (reply.status) {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(reply.errorBody ?? { error: { message: 'scripted failure', type: 'error' } }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const base = {
      id: `chatcmpl-${index}`,
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: body.model,
    };
    const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    for (const p of reply.text ? pieces(reply.text, 7) : []) {
      send({ ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] });
    }
    (reply.toolCalls ?? []).forEach((tc, i) => {
      const args = JSON.stringify(tc.arguments);
      send({
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: i, id: `call_${index}_${i}`, type: 'function', function: { name: tc.name, arguments: '' } },
              ],
            },
            finish_reason: null,
          },
        ],
      });
      for (const p of pieces(args, 5)) {
        send({
          ...base,
          choices: [
            { index: 0, delta: { tool_calls: [{ index: i, function: { arguments: p } }] }, finish_reason: null },
          ],
        });
      }
    });
    const usage = {
      prompt_tokens: reply.usage?.input ?? 11,
      completion_tokens: reply.usage?.output ?? 7,
      total_tokens: (reply.usage?.input ?? 11) + (reply.usage?.output ?? 7),
    };
    const finish = reply.toolCalls?.length ? 'tool_calls' : 'stop';
    if (opts.groq) {
      send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], x_groq: { id: 'req_1', usage } });
    } else {
      send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
      const so = body.stream_options as { include_usage?: boolean } | undefined;
      if (so?.include_usage) send({ ...base, choices: [], usage });
    }
    res.end('data: [DONE]\n\n');
  });
}

export type { ServerResponse };
