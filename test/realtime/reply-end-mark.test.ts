import { describe, expect, it } from 'vitest';
import { isReplyEndMark } from '../../shared/contracts/reply-end-mark.ts';
import { replyPipeline, utteranceAt } from './reply-pipeline.ts';

/**
 * The reply's end mark (`<turn>:end`, docs/realtime.md "Marks") over the reply half of the real pipeline (reply →
 * sentences → local TTS → playback) and a far end that logs what it was sent, marks and clears in order: one end
 * mark per complete reply, behind its last sentence's mark; none after a barge-in's cut; again behind a reply
 * resumed after a tentative stop. Its echo is no sentence played: it neither closes a reply nor moves an estimate.
 */
function pipeline() {
  /** The far end's log: each mark's name, and `!clear` for each flush. */
  const log: string[] = [];
  const { p, conv, playback, now, out, errors, until, rows } = replyPipeline(
    { sendAudio: () => {}, sendMark: (name) => log.push(name), sendClear: () => log.push('!clear') },
    () => `far end got ${log.join(',')}`,
  );
  const echo = (...names: string[]) => {
    for (const name of names) p.push({ kind: 'mark', name });
  };
  /** A reply to caller speech: its turn id (the LLM's text is pushed by the test, as the LLM stage would). */
  const replyTo = (text: string) => {
    const at = now();
    p.push(utteranceAt(text, at));
    // The reply stage opens the turn at once (the user-turn frame reaches the sink only behind the stages' work).
    const turn = conv.current;
    if (!turn || turn.closed) throw new Error('no reply opened');
    return turn.id;
  };
  return { p, conv, playback, log, out, errors, until, rows, echo, replyTo };
}

const SENTENCES = ['Sure, we open at nine.', 'We close at five on weekdays.', 'On Saturdays we close at noon.'];
const marksOf = (log: string[], turnId: string) => log.filter((m) => m.startsWith(`${turnId}:`));

describe('the reply end mark', () => {
  it('follows a complete reply once, behind its last sentence; its echo closes nothing and moves nothing', async () => {
    const h = pipeline();
    const turnId = h.replyTo('When are you open?');
    h.p.push({ kind: 'llm-text', turnId, text: SENTENCES.slice(0, 2).join(' ') + ' ' });
    // Sentences go out while the model still writes; the reply is not complete, so no end mark yet.
    await h.until(() => marksOf(h.log, turnId).length >= 2);
    expect(h.log.filter(isReplyEndMark)).toEqual([]);
    h.p.push({ kind: 'llm-text', turnId, text: SENTENCES[2]! });
    h.p.push({ kind: 'llm-done', turnId, llmMs: 5 });
    await h.until(() => h.out.some((f) => f.kind === 'agent-done'));
    const marks = marksOf(h.log, turnId);
    expect(marks.at(-1)).toBe(`${turnId}:end`);
    expect(marks.filter(isReplyEndMark)).toHaveLength(1);
    const sentences = marks.slice(0, -1);
    expect(sentences.length).toBeGreaterThanOrEqual(3);
    expect(sentences.every((m) => /^t\d+:\d+$/.test(m))).toBe(true);

    // Every sentence but the last played, then the end mark came back (out of order): the reply is still playing.
    const endBefore = h.playback.nextStartMs();
    h.echo(...sentences.slice(0, -1), `${turnId}:end`);
    expect(h.rows()).toEqual([]);
    expect(h.playback.speaking).toBe(true);
    expect(h.playback.turnPlayed(turnId)).toBe(false);
    expect(h.playback.nextStartMs()).toBeGreaterThanOrEqual(endBefore);
    // The last sentence's mark closes it, whole.
    h.echo(sentences.at(-1)!);
    await h.until(() => h.rows().length === 1);
    expect(h.rows()[0]).toMatchObject({ interrupted: false, text: SENTENCES.join(' ') });
    h.echo(`${turnId}:end`);
    expect(h.rows()).toHaveLength(1);
    expect(h.errors).toEqual([]);
  });

  it('is sent for a reply with no audio (a failed turn), so a far end knows it is over', async () => {
    const h = pipeline();
    const turnId = h.replyTo('Hello?');
    h.p.push({ kind: 'llm-done', turnId, llmMs: 5, error: 'llm: scripted failure' });
    await h.until(() => h.rows().length === 1);
    expect(h.log).toEqual([`${turnId}:end`]);
  });

  it('a say (the greeting) ends with one too', async () => {
    const h = pipeline();
    h.p.push({ kind: 'say', text: 'Hello, thanks for calling. How can I help?', purpose: 'greeting' });
    await h.until(() => h.out.some((f) => f.kind === 'agent-done'));
    expect(h.log.length).toBeGreaterThanOrEqual(2);
    expect(h.log.filter(isReplyEndMark)).toEqual([h.log.at(-1)]);
  });

  it('a barge-in cuts the reply: nothing after the clear, before or after its text is done', async () => {
    // Complete when cut: its end mark went out before the clear (the far end's flush echoes it as flushed).
    const a = pipeline();
    const done = a.replyTo('When are you open?');
    a.p.push({ kind: 'llm-text', turnId: done, text: SENTENCES.join(' ') });
    a.p.push({ kind: 'llm-done', turnId: done, llmMs: 5 });
    await a.until(() => a.out.some((f) => f.kind === 'agent-done'));
    a.echo(a.log[0]!);
    a.p.push({ kind: 'interrupt', atMs: a.conv.now(), reason: 'speech', onsetAt: a.conv.now(), flush: true });
    await a.until(() => a.rows().length === 1);
    expect(a.log.at(-1)).toBe('!clear');
    expect(a.log.filter(isReplyEndMark)).toEqual([`${done}:end`]);
    expect(a.rows()[0]).toMatchObject({ interrupted: true });

    // Cut while the model still wrote: its late llm-done sends nothing (the reply was closed as heard).
    const b = pipeline();
    const cut = b.replyTo('When are you open?');
    b.p.push({ kind: 'llm-text', turnId: cut, text: SENTENCES.slice(0, 2).join(' ') + ' ' });
    await b.until(() => marksOf(b.log, cut).length >= 1);
    b.p.push({ kind: 'interrupt', atMs: b.conv.now(), reason: 'speech', onsetAt: b.conv.now(), flush: true });
    await b.until(() => b.rows().length === 1);
    b.p.push({ kind: 'llm-done', turnId: cut, llmMs: 5 });
    // The caller's speech is the next turn: its reply ends with its own end mark.
    const next = b.replyTo('Sorry, what?');
    b.p.push({ kind: 'llm-text', turnId: next, text: 'We open at nine.' });
    b.p.push({ kind: 'llm-done', turnId: next, llmMs: 5 });
    await b.until(() => b.log.includes(`${next}:end`));
    expect(b.log.filter(isReplyEndMark)).toEqual([`${next}:end`]);
    expect(b.log.indexOf('!clear')).toBeLessThan(b.log.indexOf(`${next}:0`));
    expect(b.errors).toEqual([]);
  });

  it('goes out again behind a reply resumed after a tentative stop, and the resumed reply closes whole', async () => {
    const h = pipeline();
    const turnId = h.replyTo('When are you open?');
    h.p.push({ kind: 'llm-text', turnId, text: SENTENCES.join(' ') });
    h.p.push({ kind: 'llm-done', turnId, llmMs: 5 });
    await h.until(() => h.out.some((f) => f.kind === 'agent-done'));
    expect(h.log.at(-1)).toBe(`${turnId}:end`);
    // The first sentence played; a hum over the agent stops it (the far end flushes the rest, end mark included).
    h.echo(h.log[0]!);
    h.p.push({ kind: 'hold-playback', atMs: h.conv.now(), onsetAt: h.conv.now() });
    expect(h.log.at(-1)).toBe('!clear');
    const stopped = h.log.length;
    // No words came: the rest plays again, each sentence with a mark of its own, and the end mark behind them.
    h.p.push({ kind: 'resume-playback', atMs: h.conv.now() });
    const resumed = h.log.slice(stopped);
    expect(resumed.length).toBeGreaterThanOrEqual(2);
    expect(resumed.slice(0, -1).every((m) => /^t\d+:\d+:r1$/.test(m))).toBe(true);
    expect(resumed.at(-1)).toBe(`${turnId}:end`);
    h.echo(...resumed);
    await h.until(() => h.rows().length === 1);
    expect(h.rows()[0]).toMatchObject({ interrupted: false, text: SENTENCES.join(' ') });
    expect(h.errors).toEqual([]);
  });
});
