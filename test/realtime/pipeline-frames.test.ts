import { describe, expect, it } from 'vitest';
import { replyPipeline, utteranceAt } from './reply-pipeline.ts';

const GOODBYE =
  'Your balance has run out, so this call has to end now. Thank you for calling the front desk today. ' +
  'You can top up your credits in the portal at any time. Goodbye!';

/**
 * The reply half of the voice pipeline (reply → sentences → local TTS → playback) on a far end that records what it
 * was sent: a `say` is spoken without the LLM, an `end-call` goes on only once the audio before it has played, and
 * a barge-in flushes playback, stores what was heard and keeps the `end-call` queued behind the cut reply.
 */
function pipeline() {
  const far = { audioFrames: 0, marks: [] as string[], clears: 0 };
  const h = replyPipeline(
    {
      sendAudio: (pcm) => {
        expect(pcm.length).toBe(320); // 20 ms at 8 kHz
        far.audioFrames++;
      },
      sendMark: (name) => far.marks.push(name),
      sendClear: () => far.clears++,
    },
    () => `sink got ${h.out.map((f) => f.kind).join(',')}`,
  );
  return { p: h.p, conv: h.conv, far, out: h.out, errors: h.errors, until: h.until, rows: h.rows, reset: h.reset };
}

describe('voice pipeline frames: say and end-call', () => {
  it('speaks a say without the LLM; end-call goes on once its audio has played, with its reason', async () => {
    const { p, far, out, errors, until, rows } = pipeline();
    p.push({ kind: 'say', text: GOODBYE, purpose: 'goodbye' });
    p.push({ kind: 'end-call', reason: 'balance' });
    // Every sentence sent, each followed by its mark; the far end has not played them yet.
    await until(() => out.some((f) => f.kind === 'agent-done'));
    expect(far.marks.length).toBeGreaterThanOrEqual(3);
    expect(far.marks.every((m) => m.startsWith('t1:'))).toBe(true);
    expect(far.audioFrames).toBeGreaterThan(5 * 50); // several seconds of speech in 20 ms frames
    expect(out.some((f) => f.kind === 'end-call')).toBe(false);
    // The far end plays the audio and echoes the marks: the reply is complete, then the call may end.
    for (const m of far.marks) p.push({ kind: 'mark', name: m });
    await until(() => out.some((f) => f.kind === 'end-call'));
    const kinds = out.map((f) => f.kind);
    expect(kinds.indexOf('turn-done')).toBeLessThan(kinds.indexOf('end-call'));
    expect(out.find((f) => f.kind === 'end-call')).toEqual({ kind: 'end-call', reason: 'balance' });
    expect(rows()).toEqual([expect.objectContaining({ idx: 0, text: GOODBYE, interrupted: false })]);
    // Synthesized (not cached) characters are reported for the bill.
    const billed = out.flatMap((f) => (f.kind === 'usage' && f.category === 'tts' ? [f.units] : []));
    expect(billed.reduce((a, b) => a + b, 0)).toBeGreaterThan(GOODBYE.length - 10);
    expect(far.clears).toBe(0);
    expect(errors).toEqual([]);
  });

  it('a barge-in flushes playback and keeps what was heard; the end-call behind the cut reply still ends the call', async () => {
    const { p, conv, far, out, errors, until, rows } = pipeline();
    p.push({ kind: 'say', text: GOODBYE, purpose: 'goodbye' });
    p.push({ kind: 'end-call', reason: 'max-credits' });
    await until(() => far.marks.length >= 1);
    // The caller played the first sentence, then talked over the second.
    p.push({ kind: 'mark', name: far.marks[0]! });
    const onsetAt = conv.now();
    p.push({ kind: 'interrupt', atMs: conv.now(), reason: 'speech', onsetAt, flush: true });
    expect(far.clears).toBe(1);
    // The flush travels on as a frame, before the interrupt it belongs to.
    expect(out.map((f) => f.kind).filter((k) => k === 'clear' || k === 'interrupt')).toEqual(['clear', 'interrupt']);
    await until(() => out.some((f) => f.kind === 'end-call'));
    const [row] = rows();
    expect(row).toMatchObject({ interrupted: true });
    expect(row!.text.length).toBeGreaterThan(0);
    expect(GOODBYE.startsWith(row!.text)).toBe(true);
    expect(row!.text.length).toBeLessThan(GOODBYE.length);
    expect(out.find((f) => f.kind === 'interruption')).toMatchObject({ record: { turnIdx: 0, reason: 'speech' } });
    expect(out.find((f) => f.kind === 'end-call')).toEqual({ kind: 'end-call', reason: 'max-credits' });
    expect(errors).toEqual([]);
  });
});

describe('voice pipeline frames: suspected cut-ins (issue 25)', () => {
  /** A reply to caller speech, its text streamed as the LLM stage would, played until its first audio went out. */
  async function replying(h: ReturnType<typeof pipeline>) {
    const at = h.conv.now();
    h.p.push(utteranceAt('Is the office open on Tuesday?', at));
    const turn = h.out.find((f) => f.kind === 'user-turn');
    if (turn?.kind !== 'user-turn') throw new Error('no user-turn');
    h.p.push({ kind: 'llm-text', turnId: turn.turnId, text: GOODBYE });
    h.p.push({ kind: 'llm-done', turnId: turn.turnId, llmMs: 5 });
    await h.until(() => h.out.some((f) => f.kind === 'agent-speaking'));
    return h.conv.turn(turn.turnId)!;
  }

  it('marks a reply the caller talked over within CUT_IN_WINDOW_MS of its first audio, on its trace row', async () => {
    const h = pipeline();
    const t = await replying(h);
    h.p.push({ kind: 'interrupt', atMs: h.conv.now(), reason: 'speech', onsetAt: t.firstSendAt! + 100, flush: true });
    await h.until(() => h.rows().length === 1);
    expect(h.rows()[0]).toMatchObject({ interrupted: true, suspectedCutIn: true });
    expect(h.errors).toEqual([]);
  });

  it('does not mark a barge-in that began well after the reply started playing', async () => {
    const h = pipeline();
    const t = await replying(h);
    h.p.push({ kind: 'interrupt', atMs: h.conv.now(), reason: 'speech', onsetAt: t.firstSendAt! + 2000, flush: true });
    await h.until(() => h.rows().length === 1);
    expect(h.rows()[0]).toMatchObject({ interrupted: true, suspectedCutIn: false });
  });
});
