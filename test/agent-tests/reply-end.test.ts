import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenarioFile } from '../../shared/contracts/agent-tests.ts';
import { allChecks } from '../../shared/domains/agent-tests/results.ts';
import { runSuite } from '../../shared/domains/agent-tests/suite.ts';
import { FAST_PLAYOUT } from '../../support/realtime/fast-line.ts';
import { frontDeskPlatform } from './fixtures.ts';

/**
 * The runner takes a reply as over when the platform's end mark for it has played (`<turn>:end`, reply-end.ts), not
 * after a silence: a reply whose model stalls after its first word for longer than the old 1.5 s rule (a starved
 * TTS between two sentences reads the same on the line) is recorded whole, and the caller neither speaks into the
 * gap nor hangs up in it. On the silence rule both replies here were cut to their first word ("Yes,", "Sure,").
 */
const STALL_MS = 3000;

/**
 * The scripted LLM behind a server speaking the same protocol (OpenAI's streamed chat completions) that holds each
 * answer's stream for STALL_MS after its first word: the model's own pause, at the vendor's boundary.
 */
async function stallingLlm(): Promise<{ baseUrl: string; target: string; server: Server }> {
  const proxy = { baseUrl: '', target: '', server: null as unknown as Server };
  proxy.server = createServer((req, res) => void relay(proxy.target, req, res));
  await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
  proxy.baseUrl = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}/v1`;
  return proxy;
}

async function relay(target: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  const up = await fetch(new URL(req.url!, target), {
    method: req.method,
    headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
    body: Buffer.concat(chunks),
    signal: gone.signal,
  }).catch(() => null);
  if (!up?.body) return void res.writeHead(502).end();
  res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'text/event-stream' });
  let buf = '';
  let stalled = false;
  try {
    for await (const piece of up.body as AsyncIterable<Uint8Array>) {
      buf += Buffer.from(piece).toString('utf8');
      for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
        const event = buf.slice(0, end + 2);
        buf = buf.slice(end + 2);
        res.write(event);
        if (!stalled && /"content":"[^"]+"/.test(event)) {
          stalled = true;
          await sleep(STALL_MS, undefined, { signal: gone.signal });
        }
      }
    }
    res.end(buf);
  } catch {
    res.destroy(); // the platform cancelled the turn
  }
}

let platform: Awaited<ReturnType<typeof frontDeskPlatform>> | undefined;
let llm: Awaited<ReturnType<typeof stallingLlm>> | undefined;

beforeAll(async () => {
  const proxy = await stallingLlm();
  llm = proxy;
  platform = await frontDeskPlatform((env) => {
    proxy.target = new URL(env.OPENAI_BASE_URL!).origin;
    return { OPENAI_BASE_URL: proxy.baseUrl };
  });
}, 60_000);

afterAll(async () => {
  await platform?.close();
  llm?.server.close();
});

const FIRST = 'Yes, we are open on Saturday from nine until noon.';
const SECOND = 'Sure, goodbye and thanks for calling.';

describe('the runner waits for the end of a reply', () => {
  it('records a reply whose second sentence comes seconds after its first whole, and speaks after it', async () => {
    const { p, vendors, key, agentId } = platform!;
    const scenario = parseScenarioFile(
      JSON.stringify({
        name: 'a reply that stalls after its first word',
        llm: { replies: [FIRST, SECOND] },
        turns: [
          { say: 'Are you open on Saturday?', expect: { replyMatches: '(?i)until noon' } },
          { say: 'Thank you, goodbye.', expect: { replyMatches: '(?i)thanks for calling' } },
        ],
      }),
      'stall.json',
    )[0]!;
    const [r] = await runSuite(
      { apiKey: key, agentId },
      [{ file: 'stall.json', scenario }],
      () => Promise.resolve({ url: p.url, vendors, kind: 'scripted' as const }),
      { playout: FAST_PLAYOUT },
    );
    const why = JSON.stringify({ error: r!.error, transcript: r!.transcript });
    expect(r!.error, why).toBeNull();
    expect(
      allChecks(r!).filter((c) => !c.passed),
      why,
    ).toEqual([]);
    expect(r!.turns.map((t) => t.reply)).toEqual([FIRST, SECOND]);
    // Each turn of the caller was heard as said: none was spoken into the agent's pause.
    expect(r!.turns.map((t) => t.heard.replace(/[.?!]$/, '').toLowerCase())).toEqual([
      'are you open on saturday',
      'thank you, goodbye',
    ]);
    expect(r!.transcript.filter((t) => t.speaker === 'user')).toHaveLength(2);
  }, 120_000);
});
