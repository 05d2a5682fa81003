import { describe, expect, it } from 'vitest';
import type { DataFrame, Frame } from '../../workers/realtime/pipeline/frames.ts';
import { StageHarness } from '../../workers/realtime/pipeline/harness.ts';
import { SentenceStage } from '../../workers/realtime/pipeline/output/sentence-stage.ts';
import { Stage } from '../../workers/realtime/pipeline/stage.ts';
import { TTS_LOOKAHEAD_MS, TtsStage, type TtsTrace } from '../../workers/realtime/pipeline/output/tts-stage.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';

/** A stage whose data work waits until released, to observe overtaking and cancellation. */
class SlowStage extends Stage {
  started: string[] = [];
  aborted: string[] = [];
  constructor() {
    super('slow');
  }
  protected override async onData(frame: DataFrame, signal: AbortSignal): Promise<void> {
    if (frame.kind !== 'llm-text') return this.emit(frame);
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

const t = (text: string): Frame => ({ kind: 'llm-text', turnId: 't1', text });

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
    expect(h.out[1]).toMatchObject({ kind: 'llm-text', text: 'fast-after' });
    expect(h.stage.started).toEqual(['slow-1', 'fast-after']);
  });

  it('drops data after an end frame', async () => {
    const h = new StageHarness(new SlowStage());
    h.push({ kind: 'end', reason: 'caller-hangup' }, t('fast-late'));
    expect(h.kinds()).toEqual(['end']);
  });

  it('splits streamed LLM text into sentences, holding short fragments', async () => {
    const h = new StageHarness(new SentenceStage());
    const d = (text: string): Frame => ({ kind: 'llm-text', turnId: 'trn_1', text });
    h.push(d('Hello there, '), d('how are you today? I am'), d(' fine. Ok. '), d('Bye now'));
    h.push({ kind: 'llm-done', turnId: 'trn_1', llmMs: 10 });
    await h.until((o) => o.some((f) => f.kind === 'llm-done'));
    const sentences = h.out.filter((f) => f.kind === 'sentence').map((f) => (f as { text: string }).text);
    // "Hello there," is the reply's opener: spoken first, alone (see 'first chunk of a reply').
    expect(sentences).toEqual(['Hello there,', 'how are you today?', 'I am fine. Ok.', 'Bye now']);
    expect(h.out.at(-2)).toMatchObject({ kind: 'sentence', last: true, index: 3 });
  });
});

describe('first chunk of a reply', () => {
  it('speaks an opener, or up to a clause or a phrase boundary (3–8 words), before the first sentence ends', async () => {
    const h = new StageHarness(new SentenceStage());
    const d = (text: string): Frame => ({ kind: 'llm-text', turnId: 'trn_2', text });
    h.push(d('We are open from eight in the morning until six in the evening '), d('from Monday to Friday. '));
    h.push(d('Well, on Saturdays, we open at nine. '), { kind: 'llm-done', turnId: 'trn_2', llmMs: 1 });
    await h.until((o) => o.some((f) => f.kind === 'llm-done'));
    const s = h.out.filter((f) => f.kind === 'sentence').map((f) => (f as { text: string }).text);
    expect(s[0]).toBe('We are open');
    expect(s[1]).toBe('from eight in the morning until six in the evening from Monday to Friday.');
    expect(s[2]).toBe('Well, on Saturdays, we open at nine.');
    const h2 = new StageHarness(new SentenceStage());
    h2.push({ kind: 'llm-text', turnId: 'trn_3', text: 'Sure thing, and the second part, comes later' });
    await h2.until((o) => o.length > 0);
    expect((h2.out[0] as { text: string }).text).toBe('Sure thing,');
    const h4 = new StageHarness(new SentenceStage());
    h4.push({ kind: 'llm-text', turnId: 'trn_5', text: 'The second part of it, comes later' });
    await h4.until((o) => o.length > 0);
    expect((h4.out[0] as { text: string }).text).toBe('The second part of it,');
    // No phrase boundary: eight words at most, counted only once a word is complete.
    const h3 = new StageHarness(new SentenceStage());
    const d3 = (text: string): Frame => ({ kind: 'llm-text', turnId: 'trn_4', text });
    h3.push(d3('Our friendly team will gladly help every single'));
    h3.push(d3(' caller'), d3(' today '));
    await h3.until((o) => o.length > 0);
    expect((h3.out[0] as { text: string }).text).toBe('Our friendly team will gladly help every single');
    h3.push(d3('Thanks. '), { kind: 'llm-done', turnId: 'trn_4', llmMs: 1 });
    await h3.until((o) => o.some((f) => f.kind === 'llm-done'));
    const s3 = h3.out.filter((f) => f.kind === 'sentence').map((f) => (f as { text: string }).text);
    expect(s3).toEqual(['Our friendly team will gladly help every single', 'caller today Thanks.', '']);
  });
});

describe('synthesis paced by playback', () => {
  const sentence = (index: number, text: string, last = false): Frame => ({
    kind: 'sentence',
    turnId: 'trn_p',
    index,
    text,
    last,
  });
  function stage(ahead: () => number) {
    const started: number[] = [];
    // The reply's trace. The stage stamps the synthesis start on it while none is set; reading none back every
    // time, the test sees one stamp per sentence whose synthesis began (sentences go in order).
    const turn = {
      get synthStartAt(): number | null {
        return null;
      },
      set synthStartAt(_at: number | null) {
        started.push(started.length);
      },
      firstAudioAt: null as number | null,
      error: null as string | null,
    };
    const trace: TtsTrace = {
      now: () => performance.now(),
      turn: () => turn,
      queuedAheadMs: ahead,
      cacheScope: () => null,
    };
    const h = new StageHarness(
      new TtsStage(new LocalTtsEngine(), { voiceId: 'default', speed: 1, pitch: 1 }, 8000, trace),
    );
    return { h, started };
  }
  const done = (i: number) => (o: Frame[]) => o.some((f) => f.kind === 'tts-audio' && f.sentence === i && f.last);

  it('holds later sentences while enough audio is queued, and a barge-in drops them unsynthesized', async () => {
    const { h, started } = stage(() => 10_000);
    h.push(sentence(0, 'Hello, this is the first part.'), sentence(1, 'And this would be the second.', true));
    await h.until(done(0));
    // The first sentence is never held (someone waits for it); the second waits for the queue to drain.
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toEqual([0]);
    h.push({ kind: 'interrupt', atMs: 0, reason: 'speech' });
    await h.until((o) => o.some((f) => f.kind === 'interrupt'));
    expect(started).toEqual([0]);
    expect(h.out.some((f) => f.kind === 'tts-audio' && f.sentence === 1)).toBe(false);
  });

  it('speaks a sentence with a 9,000-letter word with the word cut short, never failing the call (issue #35)', async () => {
    const { h } = stage(() => 0);
    h.push(sentence(0, `Your code is ${'x'.repeat(9000)}, thanks.`, true));
    await h.until(done(0));
    expect(h.out.some((f) => f.kind === 'turn-error')).toBe(false);
    const samples = h.out.reduce((n, f) => n + (f.kind === 'tts-audio' ? f.pcm.length / 2 : 0), 0);
    // 64 letters spelled out and four words: seconds of audio, where the whole word would be half an hour.
    expect(samples / 8000).toBeGreaterThan(1);
    expect(samples / 8000).toBeLessThan(60);
  });

  it('synthesizes the next sentence once the queue is under the lookahead', async () => {
    let queued = TTS_LOOKAHEAD_MS + 150;
    const { h, started } = stage(() => queued);
    h.push(sentence(0, 'Hello, this is the first part.'), sentence(1, 'And this is the second.', true));
    await h.until(done(0));
    expect(started).toEqual([0]);
    queued = 0;
    await h.until(done(1));
    expect(started).toEqual([0, 1]);
  });
});
