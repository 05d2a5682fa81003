import { describe, expect, it } from 'vitest';
import type { DataFrame, Frame } from '../../workers/realtime/pipeline/frames.ts';
import { StageHarness } from '../../workers/realtime/pipeline/harness.ts';
import { SentenceStage } from '../../workers/realtime/pipeline/sentence-stage.ts';
import { Stage } from '../../workers/realtime/pipeline/stage.ts';

/** A stage whose data work waits until released, to observe overtaking and cancellation. */
class SlowStage extends Stage {
  started: string[] = [];
  aborted: string[] = [];
  constructor() {
    super('slow');
  }
  protected override async onData(frame: DataFrame, signal: AbortSignal): Promise<void> {
    if (frame.kind !== 'transcript') return this.emit(frame);
    this.started.push(frame.text);
    await new Promise<void>((resolve) => {
      signal.addEventListener('abort', () => {
        this.aborted.push(frame.text);
        resolve();
      });
      if (frame.text.startsWith('fast')) resolve();
    });
    if (!signal.aborted) this.emit(frame);
  }
}

const t = (text: string): Frame => ({ kind: 'transcript', text, final: true, atMs: 0 });

describe('pipeline stages', () => {
  it('lets system frames overtake queued data frames and cancels the one in flight', async () => {
    const h = new StageHarness(new SlowStage());
    h.push(t('slow-1'), t('slow-2'), t('slow-3'));
    expect(h.stage.started).toEqual(['slow-1']);
    h.push({ kind: 'interrupt', atMs: 5, reason: 'barge-in' });
    // The interruption is out before any data frame; the queued ones are dropped, the running one aborted.
    expect(h.kinds()).toEqual(['interrupt']);
    await h.until(() => h.stage.aborted.length === 1);
    expect(h.stage.aborted).toEqual(['slow-1']);
    h.push(t('fast-after'));
    await h.until((o) => o.length === 2);
    expect(h.out[1]).toMatchObject({ kind: 'transcript', text: 'fast-after' });
    expect(h.stage.started).toEqual(['slow-1', 'fast-after']);
  });

  it('drops data after an end frame', async () => {
    const h = new StageHarness(new SlowStage());
    h.push({ kind: 'end', reason: 'stop' }, t('fast-late'));
    expect(h.kinds()).toEqual(['end']);
  });

  it('splits streamed LLM text into sentences, holding short fragments', async () => {
    const h = new StageHarness(new SentenceStage());
    const d = (text: string): Frame => ({ kind: 'llm-text', turnId: 'trn_1', text });
    h.push(d('Hello there, '), d('how are you today? I am'), d(' fine. Ok. '), d('Bye now'));
    h.push({ kind: 'llm-done', turnId: 'trn_1', llmMs: 10 });
    await h.until((o) => o.some((f) => f.kind === 'llm-done'));
    const sentences = h.out.filter((f) => f.kind === 'sentence').map((f) => (f as { text: string }).text);
    expect(sentences).toEqual(['Hello there, how are you today?', 'I am fine. Ok.', 'Bye now']);
    expect(h.out.at(-2)).toMatchObject({ kind: 'sentence', last: true, index: 2 });
  });
});

describe('first chunk of a reply', () => {
  it('speaks up to a clause or the first 12 words before the first sentence ends', async () => {
    const h = new StageHarness(new SentenceStage());
    const d = (text: string): Frame => ({ kind: 'llm-text', turnId: 'trn_2', text });
    h.push(d('We are open from eight in the morning until six in the evening '), d('from Monday to Friday. '));
    h.push(d('Well, on Saturdays, we open at nine. '), { kind: 'llm-done', turnId: 'trn_2', llmMs: 1 });
    await h.until((o) => o.some((f) => f.kind === 'llm-done'));
    const s = h.out.filter((f) => f.kind === 'sentence').map((f) => (f as { text: string }).text);
    expect(s[0]).toBe('We are open from eight in the morning until six in the');
    expect(s[1]).toBe('evening from Monday to Friday.');
    expect(s[2]).toBe('Well, on Saturdays, we open at nine.');
    const h2 = new StageHarness(new SentenceStage());
    h2.push({ kind: 'llm-text', turnId: 'trn_3', text: 'Sure thing, and the second part, comes later' });
    await h2.until((o) => o.length > 0);
    expect((h2.out[0] as { text: string }).text).toBe('Sure thing, and the second part,');
  });
});
