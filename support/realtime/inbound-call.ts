import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { waitUntil, type TestPlatform } from '../helpers/platform.ts';
import { FAST_LINE } from './fast-line.ts';
import { fliteUtterance, tokenFromTwiml, wsUrl } from './helpers.ts';

/** Closed agent replies of a session so far (its trace rows are written as each reply closes). */
async function closedReplies(p: TestPlatform, sessionId: string): Promise<number> {
  const { rows } = await p.infra.db.query<{ n: string }>(
    `select count(*) as n from rt_turns where session_id = $1 and speaker = 'assistant'`,
    [sessionId],
  );
  return Number(rows[0]!.n);
}

/**
 * An inbound call over the real Twilio media path (POST /v1/sessions/twilio, then the scripted Twilio caller on the
 * stream): after the greeting the caller says each line (flite audio) once the agent's previous reply has closed,
 * so it never talks over one, then hangs up. The STT double decides what each line is heard as. The line is fast
 * (`rate`, FAST_LINE by default: fast-line.ts): what such a call tests is what it leaves behind. Returns the session.
 */
export async function inboundCallSaying(
  p: TestPlatform,
  o: { key: string; agentId: string; says: string[]; webhookUrl?: string; rate?: number },
): Promise<string> {
  const res = await p.request('/v1/sessions/twilio', {
    method: 'POST',
    key: o.key,
    json: { agentId: o.agentId, from: '+15550001111', to: '+15550002222', webhookUrl: o.webhookUrl },
  });
  if (res.status !== 200) throw new Error(`session create: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { twiml: string; sessionId: string };
  const caller = new TwilioCaller({
    url: wsUrl(p.url, '/v1/sessions/twilio/stream'),
    token: tokenFromTwiml(body.twiml),
    rate: o.rate ?? FAST_LINE,
  });
  await caller.start();
  await waitUntil(async () => (await closedReplies(p, body.sessionId)) >= 1, 20_000);
  for (const [i, line] of o.says.entries()) {
    await caller.say(await fliteUtterance(line));
    await waitUntil(async () => (await closedReplies(p, body.sessionId)) >= i + 2, 20_000);
  }
  caller.stop();
  await caller.closed;
  return body.sessionId;
}
