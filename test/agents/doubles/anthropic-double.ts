import { pieces, startDouble, type Double } from '../../../shared/domains/agent-tests/simulators/http-double.ts';
import type { LlmScript } from '../../../shared/domains/agent-tests/simulators/llm-script.ts';

/**
 * A Messages API server speaking Anthropic's streaming wire: `event: message_start` (input usage), per block
 * `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) / `content_block_stop`, a
 * `ping`, `message_delta` (stop_reason, output usage) and `message_stop`.
 */
export async function startAnthropicDouble(script: LlmScript): Promise<Double> {
  return startDouble((rec, res, index) => {
    if (rec.method !== 'POST' || rec.path !== '/v1/messages') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not found' } }));
    }
    const body = rec.json as Record<string, unknown>;
    const reply = script(body, index);
    if (reply.status) {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      return void res.end(
        JSON.stringify(reply.errorBody ?? { type: 'error', error: { type: 'api_error', message: 'scripted failure' } }),
      );
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send('message_start', {
      type: 'message_start',
      message: {
        id: `msg_${index}`,
        type: 'message',
        role: 'assistant',
        content: [],
        model: body.model,
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: reply.usage?.input ?? 13, output_tokens: 1 },
      },
    });
    let block = 0;
    if (reply.text) {
      send('content_block_start', {
        type: 'content_block_start',
        index: block,
        content_block: { type: 'text', text: '' },
      });
      send('ping', { type: 'ping' });
      for (const p of pieces(reply.text, 6)) {
        send('content_block_delta', {
          type: 'content_block_delta',
          index: block,
          delta: { type: 'text_delta', text: p },
        });
      }
      send('content_block_stop', { type: 'content_block_stop', index: block });
      block++;
    }
    for (const tc of reply.toolCalls ?? []) {
      send('content_block_start', {
        type: 'content_block_start',
        index: block,
        content_block: { type: 'tool_use', id: `toolu_${index}_${block}`, name: tc.name, input: {} },
      });
      for (const p of pieces(JSON.stringify(tc.arguments), 4)) {
        send('content_block_delta', {
          type: 'content_block_delta',
          index: block,
          delta: { type: 'input_json_delta', partial_json: p },
        });
      }
      send('content_block_stop', { type: 'content_block_stop', index: block });
      block++;
    }
    send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: reply.toolCalls?.length ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: reply.usage?.output ?? 9 },
    });
    send('message_stop', { type: 'message_stop' });
    res.end();
  });
}
