import { describe, expect, it } from 'vitest';
import { waterfallRows } from '../../portal/src/charts/waterfall-rows.ts';
import type { Turn } from '../../portal/src/types.ts';

function turn(over: Partial<Turn>): Turn {
  return {
    index: 1,
    speaker: 'assistant',
    text: 'We are open 9am to 5pm.',
    latencyMs: 420,
    endpointMs: 200,
    sttMs: 120,
    llmMs: 0,
    ttsMs: 100,
    overheadMs: 0,
    interrupted: false,
    ...over,
  } as Turn;
}

describe('call page waterfall', () => {
  it('keeps a stage that ran in under a millisecond (the local reply engine) as a bar of its own', () => {
    const [row] = waterfallRows([turn({})]);
    const llm = row!.segments.find((s) => s.key === 'llm')!;
    expect(llm.ms).toBe(0);
    expect(llm.measured).toBe(true);
    expect(row!.segments.map((s) => s.key)).toEqual(['endpoint', 'stt', 'llm', 'tts', 'overhead']);
  });

  it('leaves out only the stages the trace did not measure', () => {
    const [row] = waterfallRows([turn({ endpointMs: undefined, overheadMs: undefined, latencyMs: 300 })]);
    const measured = row!.segments.filter((s) => s.measured).map((s) => s.key);
    expect(measured).toEqual(['stt', 'llm', 'tts']);
    // The bars still add up to the measured latency.
    expect(row!.segments.reduce((a, s) => a + s.ms, 0)).toBe(300);
  });

  it('skips caller turns and replies with no latency', () => {
    expect(waterfallRows([turn({ speaker: 'user' }), turn({ latencyMs: undefined })])).toEqual([]);
  });
});
