import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { LimitEndReason } from '../../shared/contracts/end-reasons.ts';
import { Conversation } from '../../workers/realtime/pipeline/conversation.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { LimitStage, type ReplyLimits } from '../../workers/realtime/pipeline/answer/limit-stage.ts';
import { ReplyStage } from '../../workers/realtime/pipeline/answer/reply-stage.ts';
import { Pipeline } from '../../workers/realtime/pipeline/stage.ts';
import { Playback } from '../../workers/realtime/pipeline/playback.ts';

const GOODBYE = "I'm sorry, I have to end the call here. Goodbye.";
const QUESTION = 'What time do you open tomorrow morning?';

/**
 * Seen under load (test/billing/realtime-reservations.test.ts, 2 of 5 runs beside busy loops): a daily cap with no
 * room for a reply, a reply prepared on the caller's interim words, and the caller's final arriving before the
 * reservation's answer. The limit stage then reported the limit as for a reply already playing, the session waited
 * for that reply to end before its goodbye, and the reply never started: the call stayed open and silent until the
 * caller hung up. The reply stage, the limit stage and the conversation here are the call's own; the limits are
 * the call's answer to "may this reply run?", given when the test says, in the order a loaded machine gives it.
 */
function pipeline() {
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const playback = new Playback({ outRate: 8000, sendAudio: () => {}, sendMark: () => {}, sendClear: () => {} }, now);
  const conv = new Conversation(now, playback, 'dev_test');
  let answer: (r: LimitEndReason | null) => void = () => {};
  const asked: number[] = [];
  const limits: ReplyLimits = {
    goodbye: GOODBYE,
    beforeReply: () => {
      asked.push(now());
      return new Promise((resolve) => (answer = resolve));
    },
  };
  const out: Frame[] = [];
  const p = new Pipeline(
    [new ReplyStage(conv), new LimitStage(conv, limits)],
    (f) => out.push(f),
    (_stage, e) => {
      throw e;
    },
  );
  const settle = () => new Promise((r) => setTimeout(r, 20));
  return { p, conv, out, asked, answer: (r: LimitEndReason | null) => answer(r), settle };
}

function spoken(now: number): Frame {
  return {
    kind: 'utterance',
    text: QUESTION,
    onsetAt: now - 2000,
    lastSpeechAt: now - 300,
    finalAt: now,
    endpointAt: now,
    endpointWaitMs: 300,
    vadLagMs: 0,
  };
}

describe('a prepared reply stopped by a limit', () => {
  it('confirmed before the limit answered: that turn says the goodbye and the call ends', async () => {
    const h = pipeline();
    h.p.push({ kind: 'prepare', text: QUESTION });
    await h.settle();
    expect(h.asked).toHaveLength(1);
    const turnId = h.conv.current!.id;
    // The caller's final confirms the prepared reply while its reservation is still being asked.
    h.p.push(spoken(h.conv.now()));
    await h.settle();
    expect(h.conv.current).toMatchObject({ id: turnId, held: null });
    h.answer('daily-cap');
    await h.settle();
    const after = h.out.filter((f) => ['limit-reached', 'llm-text', 'llm-done', 'end-call'].includes(f.kind));
    expect(after).toEqual([
      { kind: 'limit-reached', reason: 'daily-cap', answered: true },
      { kind: 'llm-text', turnId, text: GOODBYE + ' ' },
      { kind: 'llm-done', turnId, llmMs: 0 },
      { kind: 'end-call', reason: 'daily-cap' },
    ]);
    // Nothing of the caller's question goes to the LLM.
    expect(h.out.some((f) => f.kind === 'user-turn')).toBe(false);
  });

  it('still held when the limit answered: the session is told (its goodbye takes the floor), nothing is answered', async () => {
    const h = pipeline();
    h.p.push({ kind: 'prepare', text: QUESTION });
    await h.settle();
    h.answer('max-credits');
    await h.settle();
    expect(h.out.filter((f) => f.kind === 'limit-reached')).toEqual([
      { kind: 'limit-reached', reason: 'max-credits', answered: false },
    ]);
    expect(h.out.some((f) => f.kind === 'llm-text' || f.kind === 'user-turn')).toBe(false);
  });

  it('funded: the prepared turn goes on to the LLM', async () => {
    const h = pipeline();
    h.p.push({ kind: 'prepare', text: QUESTION });
    await h.settle();
    h.answer(null);
    await h.settle();
    expect(h.out.filter((f) => f.kind === 'user-turn')).toHaveLength(1);
    expect(h.out.some((f) => f.kind === 'limit-reached')).toBe(false);
  });
});
