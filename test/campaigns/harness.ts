import { expect } from 'vitest';
import type { Role } from '../../scripts/platform.ts';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import type { LlmScript } from '../../shared/domains/agent-tests/simulators/llm-script.ts';
import {
  startOpenAiChatDouble,
  type OpenAiChatDouble,
} from '../../shared/domains/agent-tests/simulators/openai-chat.ts';
import { startTwilioRestDouble, type TwilioRestDouble } from '../../support/doubles/twilio-rest.ts';
import { twilioVoice, type CalleeScript, type TwilioVoice } from '../../support/doubles/twilio-voice.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import { voicePlatformEnv } from '../../support/realtime/helpers.ts';

const PUBLIC = 'https://voice.example.com';

export interface CampaignHarness {
  p: TestPlatform;
  rest: TwilioRestDouble;
  voice: TwilioVoice;
  dg: DeepgramLiveDouble;
  llm: OpenAiChatDouble;
  close(): Promise<void>;
}

/**
 * The platform with Twilio at its boundary, as campaign tests need it: the Twilio REST double places calls that
 * `twilioVoice` runs end to end (status callbacks, TwiML, the real media stream; a REST hang-up ends the stream),
 * Deepgram and OpenAI doubles behind the agent.
 */
export async function startCampaignHarness(o: {
  accountSid: string;
  authToken: string;
  script: (to: string, nth: number) => CalleeScript;
  heard: (utterance: number) => string;
  /** The agent's LLM answer: the same words to every request, or a script (e.g. a post-call analysis answered apart). */
  reply: string | LlmScript;
  env?: Record<string, string>;
  roles?: Role[];
  /**
   * The callees' media clock (far-end.ts): real time unless a test asks for FAST_LINE (support/realtime/fast-line.ts).
   * Not by default: a callee who says "Hello?" as the call opens races the detector (audio time) against the STT's
   * final (wall time), and a campaign's money is the calls' wall-clock minutes; both read differently on a fast line.
   */
  rate?: number;
}): Promise<CampaignHarness> {
  const dg = await startDeepgramLiveDouble({ script: (_c, u) => o.heard(u) });
  const reply = o.reply;
  const llm = await startOpenAiChatDouble(typeof reply === 'string' ? () => ({ text: reply }) : reply, {
    key: 'sk-campaigns',
    tokensPerSecond: 1000,
  });
  let url = '';
  const voice = twilioVoice({
    accountSid: o.accountSid,
    authToken: o.authToken,
    resolve: (u) => u.replace(PUBLIC, url).replace('wss://voice.example.com', url.replace(/^http/, 'ws')),
    script: o.script,
    rate: o.rate ?? 1,
  });
  const rest = await startTwilioRestDouble({ accountSid: o.accountSid, authToken: o.authToken, onCall: voice.onCall });
  rest.onUpdate = voice.onUpdate;
  const p = await startTestPlatform({
    ...(o.roles ? { roles: o.roles } : {}),
    env: {
      ...voicePlatformEnv(dg, llm),
      PUBLIC_BASE_URL: PUBLIC,
      TWILIO_ACCOUNT_SID: o.accountSid,
      TWILIO_AUTH_TOKEN: o.authToken,
      TWILIO_API_BASE_URL: rest.url,
      REALTIME_RECORDINGS: 'false',
      ...o.env,
    },
  });
  url = p.url;
  return {
    p,
    rest,
    voice,
    dg,
    llm,
    async close() {
      await voice.idle();
      await p.close();
      await rest.close();
      await dg.close();
      await llm.close();
    },
  };
}

/** Creates a campaign through the API (201 expected) for `phones`, from the test number; returns its id. */
export async function createdCampaign(
  p: TestPlatform,
  key: string,
  body: { agentId: string; phones: string[] } & Record<string, unknown>,
): Promise<string> {
  const { phones, ...rest } = body;
  const res = await p.request('/v1/campaigns', {
    method: 'POST',
    key,
    json: { from: '+15550009999', ...rest, recipients: phones.map((phone) => ({ phone })) },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** The campaign's detail once it has completed (every recipient settled), polled through the API. */
export async function campaignCompleted<T = Record<string, unknown>>(
  p: TestPlatform,
  key: string,
  id: string,
  timeoutMs: number,
): Promise<T> {
  return waitUntil(
    async () => {
      const d = (await (await p.request(`/v1/campaigns/${id}`, { key })).json()) as T & { status?: string };
      return d.status === 'completed' ? d : null;
    },
    timeoutMs,
    250,
  );
}
