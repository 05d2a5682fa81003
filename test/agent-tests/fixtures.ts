import { expect } from 'vitest';
import type { TestRunDetail } from '../../shared/contracts/agent-tests.ts';
import { startOfflineVendors, type OfflineVendors } from '../../shared/domains/agent-tests/offline-vendors.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * The real platform (api + realtime) on port 0 with its STT and LLM pointed at the runner's simulated STT and
 * scripted LLM, a developer, and the front-desk agent: what the runner's end-to-end tests call. `env`: changes to
 * the platform's env, given the vendors' (a test that puts a server of its own in front of one).
 */
export async function frontDeskPlatform(
  env: (vendors: Record<string, string>) => Record<string, string> = () => ({}),
): Promise<{
  p: TestPlatform;
  vendors: OfflineVendors;
  key: string;
  agentId: string;
  close(): Promise<void>;
}> {
  const vendors = await startOfflineVendors();
  const p = await startTestPlatform({
    roles: ['api', 'realtime'],
    env: {
      PUBLIC_BASE_URL: 'https://voice.example.com',
      REALTIME_SESSION_SECRET: 'test-secret-test-secret-test-secret-42',
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      ...vendors.env,
      ...env(vendors.env),
    },
  });
  const { apiKey: key } = await p.developer('pro');
  const r = await p.request('/v1/agents', {
    method: 'POST',
    key,
    json: {
      name: 'Front desk',
      systemPrompt: 'You answer the phone for a dental practice.',
      firstMessage: 'Hello, thanks for calling.',
      llmModel: 'gpt-4o-mini',
    },
  });
  expect(r.status).toBe(201);
  const agentId = ((await r.json()) as { id: string }).id;
  return {
    p,
    vendors,
    key,
    agentId,
    async close() {
      await p.close();
      await vendors.close();
    },
  };
}

/** The run once it has ended (passed, failed or error), read as the developer over GET /v1/agent-tests/runs/:id. */
export function finishedRunDetail(
  p: TestPlatform,
  key: string,
  runId: string,
  timeoutMs: number,
): Promise<TestRunDetail> {
  return waitUntil(
    async () => {
      const d = (await (await p.request(`/v1/agent-tests/runs/${runId}`, { key })).json()) as TestRunDetail;
      return d.status !== 'queued' && d.status !== 'running' ? d : null;
    },
    timeoutMs,
    250,
  );
}

/** A passing scenario (over a seeded bad line) and a broken agent whose scripted reply mentions prices. */
export const FRONT_DESK_SUITE = `
- name: asks for Saturday hours
  llm:
    replies: ["Yes, on Saturday we open at nine and close at noon."]
  impairments: {noiseSnrDb: 30, packetLossPct: 2, jitterMs: 20, seed: 7}
  turns:
    - say: "Hi, are you open on Saturday morning?"
      pauseAfterWords: {3: 400}
      expect: {replyMatches: "(?i)SATURDAY"}
  expect: {replyNeverMatches: "(?i)price", endedBy: caller}
- name: never talks about prices
  llm:
    replies: ["A cleaning is ninety dollars; our prices are on the website."]
  turns:
    - say: "Can I book a cleaning next week?"
  expect: {replyNeverMatches: "(?i)price"}
`;
