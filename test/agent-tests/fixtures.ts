import type { TestRunDetail } from '../../shared/kernel/contracts/agent-tests.ts';
import { waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';

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
