import { describe, expect, it } from 'vitest';
import {
  decideOutcome,
  normalizeAnsweredBy,
  retryAt,
  type OutcomeFacts,
} from '../../shared/domains/campaigns/outcome.ts';

const base: OutcomeFacts = {
  status: 'completed',
  error: null,
  answeredBy: null,
  sessionId: 'ses_1',
  sessionEndReason: 'caller-hangup',
};

describe('campaign call outcomes', () => {
  it("maps Twilio's final status, the session's end and the AMD answer to one outcome", () => {
    expect(decideOutcome(base)).toEqual({ outcome: 'answered', reason: null });
    expect(decideOutcome({ ...base, answeredBy: 'human' }).outcome).toBe('answered');
    expect(decideOutcome({ ...base, status: 'busy' }).outcome).toBe('busy');
    expect(decideOutcome({ ...base, status: 'no-answer' }).outcome).toBe('no_answer');
    expect(decideOutcome({ ...base, status: 'failed', error: 'SIP 404' })).toEqual({
      outcome: 'failed',
      reason: 'SIP 404',
    });
    expect(decideOutcome({ ...base, sessionEndReason: 'transferred' }).outcome).toBe('transferred');
    expect(decideOutcome({ ...base, answeredBy: 'machine' }).outcome).toBe('voicemail');
    expect(decideOutcome({ ...base, answeredBy: 'machine', sessionEndReason: 'voicemail-left' }).outcome).toBe(
      'voicemail_left',
    );
    expect(decideOutcome({ ...base, sessionEndReason: 'voicemail-hung-up' }).outcome).toBe('voicemail');
    expect(decideOutcome({ ...base, sessionId: null })).toMatchObject({ outcome: 'failed' });
    expect(decideOutcome({ ...base, sessionEndReason: 'admission' }).reason).toMatch(/^admission/);
  });

  it('a call the platform hung up because its campaign was canceled is canceled, unless it was handed over', () => {
    const hung: OutcomeFacts = { ...base, hangupReason: 'campaign-canceled', sessionEndReason: 'campaign-canceled' };
    expect(decideOutcome(hung)).toMatchObject({ outcome: 'canceled', reason: expect.stringMatching(/hung up/) });
    expect(decideOutcome({ ...hung, answeredBy: 'machine', sessionEndReason: 'voicemail-left' }).outcome).toBe(
      'canceled',
    );
    expect(decideOutcome({ ...hung, sessionEndReason: 'transferred' }).outcome).toBe('transferred');
    // Ringing when it was canceled: Twilio's own final status says what happened.
    expect(decideOutcome({ ...hung, status: 'canceled' }).outcome).toBe('canceled');
    expect(decideOutcome({ ...hung, status: 'busy' }).outcome).toBe('busy');
  });

  it('a call a cap or the platform ended says so in its reason; one that never started failed', () => {
    expect(decideOutcome({ ...base, sessionEndReason: 'max-credits' })).toEqual({
      outcome: 'answered',
      reason: 'max-credits: the call reached its credit cap',
    });
    // A machine's greeting metered past the cap: the message was not left whole, so it is no voicemail_left.
    expect(decideOutcome({ ...base, answeredBy: 'machine', sessionEndReason: 'daily-cap' })).toEqual({
      outcome: 'voicemail',
      reason: 'daily-cap: the daily spending cap ran out during the call',
    });
    expect(decideOutcome({ ...base, sessionEndReason: 'start-failed' })).toMatchObject({
      outcome: 'failed',
      reason: expect.stringMatching(/^start-failed: /),
    });
    expect(decideOutcome({ ...base, sessionEndReason: 'agent-ended' })).toEqual({ outcome: 'answered', reason: null });
  });

  it("reads Twilio's AnsweredBy values and ours as human | machine | unknown", () => {
    expect(
      ['human', 'machine_start', 'machine_end_beep', 'fax', 'unknown', 'machine', null].map(normalizeAnsweredBy),
    ).toEqual(['human', 'machine', 'machine', 'machine', 'unknown', 'machine', null]);
  });

  it('backs off doubling per attempt, only for the outcomes retried and within maxAttempts', () => {
    const retry = { maxAttempts: 3, backoffSeconds: 60, on: ['busy', 'no_answer'] };
    expect(retryAt('busy', 1, retry, 0)?.getTime()).toBe(60_000);
    expect(retryAt('no_answer', 2, retry, 0)?.getTime()).toBe(120_000);
    expect(retryAt('busy', 3, retry, 0)).toBeNull();
    expect(retryAt('voicemail', 1, retry, 0)).toBeNull();
    expect(retryAt('answered', 1, retry, 0)).toBeNull();
  });
});
