import { describe, expect, it } from 'vitest';
import { rootCause, type TraceTurn } from '../../shared/domains/realtime/root-cause.ts';

const turn = (t: Partial<TraceTurn> & Pick<TraceTurn, 'idx' | 'speaker'>): TraceTurn => ({
  text: 'hello',
  start_ms: 0,
  end_ms: 0,
  stt_ms: null,
  llm_ms: null,
  tts_ms: null,
  latency_ms: null,
  endpoint_ms: null,
  interrupted: false,
  error: null,
  ...t,
});

describe('root-cause rules', () => {
  it('name slow stages, empty transcripts, errors, long silences and repeated interruptions with recommendations', () => {
    const turns = [
      turn({ idx: 0, speaker: 'assistant', start_ms: 100, end_ms: 2000 }),
      turn({ idx: 1, speaker: 'user', text: '', start_ms: 12_500, end_ms: 13_000 }),
      turn({ idx: 2, speaker: 'user', text: 'what time is it', start_ms: 14_000, end_ms: 15_000 }),
      turn({
        idx: 3,
        speaker: 'assistant',
        start_ms: 16_000,
        end_ms: 17_000,
        latency_ms: 2100,
        stt_ms: 50,
        llm_ms: 1700,
        tts_ms: 80,
      }),
      turn({ idx: 4, speaker: 'user', text: 'and tomorrow', start_ms: 18_000, end_ms: 18_500 }),
      turn({
        idx: 5,
        speaker: 'assistant',
        start_ms: 19_000,
        end_ms: 19_500,
        latency_ms: 1200,
        stt_ms: 0,
        llm_ms: 200,
        tts_ms: 900,
      }),
      turn({ idx: 6, speaker: 'assistant', start_ms: 20_000, end_ms: 20_100, error: 'llm: openai answered HTTP 500' }),
      turn({ idx: 7, speaker: 'assistant', start_ms: 20_200, end_ms: 20_300, error: 'tts: unreachable' }),
    ];
    const tools = [{ turn_idx: 3, name: 'lookup', ok: false, error: 'HTTP 502', duration_ms: 40 }];
    const interruptions = [3, 5, 7].map((t) => ({ turn_idx: t, at_ms: 0, stop_ms: 5, bleed_words: 1 }));
    const issues = rootCause(turns, tools, interruptions);
    const types = issues.map((i) => `${i.type}@${i.turn}`);
    expect(types).toEqual([
      'long_silence@1',
      'empty_transcript@1',
      'high_latency_llm@3',
      'high_latency_tts@5',
      'llm_error@6',
      'tts_error@7',
      'tool_error@3',
      'repeated_interruptions@7',
    ]);
    for (const i of issues) {
      expect(i.description.length).toBeGreaterThan(10);
      expect(i.recommendation.length).toBeGreaterThan(10);
    }
    expect(issues[2]!.description).toContain('2100 ms');
  });

  it('finds nothing in a healthy session', () => {
    const turns = [
      turn({ idx: 0, speaker: 'assistant', start_ms: 0, end_ms: 1000 }),
      turn({ idx: 1, speaker: 'user', start_ms: 1500, end_ms: 2000 }),
      turn({
        idx: 2,
        speaker: 'assistant',
        start_ms: 2600,
        end_ms: 4000,
        latency_ms: 600,
        stt_ms: 20,
        llm_ms: 300,
        tts_ms: 60,
      }),
    ];
    expect(rootCause(turns, [], [])).toEqual([]);
    // How the call ended is no issue unless the platform's cap or balance ended it.
    expect(rootCause(turns, [], [], { endReason: 'caller-hangup' })).toEqual([]);
  });

  it('says when no caller turn was ever taken (a noisy line left the call silent), unless a cap ended it', () => {
    const greeting = [turn({ idx: 0, speaker: 'assistant', start_ms: 0, end_ms: 1500 })];
    const [issue, ...rest] = rootCause(greeting, [], [], { endReason: 'caller-hangup' });
    expect(rest).toEqual([]);
    expect(issue).toMatchObject({ type: 'no_caller_speech', turn: 0 });
    expect(issue!.description).toMatch(/^No caller speech was detected/);
    expect(issue!.recommendation).toContain('noise floor');
    // A caller who spoke, even unheard words, is another rule's (empty_transcript).
    const spoke = [...greeting, turn({ idx: 1, speaker: 'user', text: '', start_ms: 2000, end_ms: 2500 })];
    expect(rootCause(spoke, [], []).map((i) => i.type)).toEqual(['empty_transcript']);
  });

  it('says when a cap ended the call, so a capped call never reads as the caller hanging up', () => {
    const turns = [turn({ idx: 0, speaker: 'assistant', start_ms: 0, end_ms: 1000 })];
    const [issue, ...rest] = rootCause(turns, [], [], { endReason: 'max-credits' });
    expect(rest).toEqual([]);
    expect(issue).toMatchObject({ type: 'call_limit', turn: 0 });
    expect(issue!.description).toContain('max-credits');
    expect(issue!.recommendation).toContain('maxCredits');
  });
});
