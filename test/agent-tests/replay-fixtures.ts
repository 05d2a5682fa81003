import { expect } from 'vitest';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { fliteUtterance, tokenFromTwiml, wsUrl } from '../../support/realtime/helpers.ts';

/** What the recorded calls of the replay tests ask, and the front desk's knowledge and greetings. */
export const QUESTION = 'What are your opening hours?';
export const HOURS = 'We are open 9am to 5pm, Monday to Friday.';
export const FIRST_V1 = 'Hello, thanks for calling the front desk.';
export const FIRST_V2 = 'Good morning, this is the new front desk.';

/** The front desk on the local reply engine, its hours in a collection (version 1). */
export const FRONT_DESK = {
  name: 'Front desk',
  llmProvider: 'local',
  firstMessage: FIRST_V1,
  collection: { name: 'hours' },
  initialContent: [{ content: HOURS }],
};

/**
 * One phone call over the real Twilio media path: greeting, the question in the flite voice, the answer, hang up.
 * Returns the CallSid and session id once the platform has stored the call's recording.
 */
export async function recordedPhoneCall(
  p: TestPlatform,
  apiKey: string,
  agentId: string,
): Promise<{ callSid: string; sessionId: string }> {
  const res = await p.request('/v1/sessions/twilio', {
    method: 'POST',
    key: apiKey,
    json: { agentId, from: '+15550100001', to: '+15550100002' },
  });
  const created = (await res.json()) as { twiml: string; sessionId: string };
  expect(res.status, JSON.stringify(created)).toBe(200);
  const c = new TwilioCaller({ url: wsUrl(p.url, '/v1/sessions/twilio/stream'), token: tokenFromTwiml(created.twiml) });
  await c.start();
  await c.until(() => c.media.length > 0, 15_000);
  await c.until(() => !c.playing && performance.now() - c.media.at(-1)!.at > 800, 15_000);
  const n = c.media.length;
  const end = await c.say(await fliteUtterance(QUESTION));
  await c.until(() => c.media.some((m, i) => i >= n && m.at > end), 15_000);
  await c.until(() => !c.playing && performance.now() - c.media.at(-1)!.at > 1200, 20_000);
  c.stop();
  c.close();
  await waitUntil(async () => {
    const d = await p.request(`/v1/observability/sessions/${created.sessionId}`, { key: apiKey });
    return ((await d.json()) as { recordingUrl?: string | null }).recordingUrl;
  }, 20_000);
  return { callSid: c.call, sessionId: created.sessionId };
}

/**
 * The platform of a replay test (api, realtime and the cpu pool that runs replays) with Deepgram at its double,
 * which hears the question in every call (the recorded call's STT; a replay brings its own simulated one).
 */
export async function replayPlatform(): Promise<{ p: TestPlatform; dg: DeepgramLiveDouble }> {
  const dg = await startDeepgramLiveDouble({
    key: 'replay-test-deepgram',
    energyThreshold: 300,
    script: () => QUESTION,
  });
  const p = await startTestPlatform({
    roles: ['api', 'realtime', 'cpu'],
    env: {
      REALTIME_SESSION_SECRET: 'replay-secret-replay-secret-replay-secret-1',
      DEEPGRAM_BASE_URL: dg.url,
      DEEPGRAM_API_KEY: dg.key,
    },
  });
  return { p, dg };
}
