import { describe, expect, it } from 'vitest';
import { SileroVad } from '../../shared/engines/vad/silero.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { Pipeline } from '../../workers/realtime/pipeline/stage.ts';
import { PREPARE_AFTER_MS } from '../../workers/realtime/pipeline/turn/evidence-turn-detector.ts';
import { TurnStage } from '../../workers/realtime/pipeline/turn/turn-stage.ts';
import { VadStage } from '../../workers/realtime/pipeline/input/vad-stage.ts';
import { callerAudio, platformTurnSettings } from '../../support/realtime/caller-audio.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';

const RATE = 8000;

/**
 * The caller half of the voice pipeline (real Silero VAD → turn stage, the platform's turn settings and `default`
 * interruption) with an agent the test stops: `agent.speaking` is what the turn stage reads as the agent's audio.
 */
function callerSide() {
  const agent = { speaking: true };
  let clockMs = 0;
  const conv: ConstructorParameters<typeof TurnStage>[0] = {
    now: () => clockMs,
    get agentActive() {
      return agent.speaking;
    },
    current: null,
    answeredBy: undefined,
    playback: {
      get speaking() {
        return agent.speaking;
      },
    } as ConstructorParameters<typeof TurnStage>[0]['playback'],
  };
  const seen: Frame[] = [];
  const out: Frame[] = [];
  const errors: unknown[] = [];
  const vad = new VadStage(new SileroVad(), RATE, {
    threshold: 0.5,
    startMs: 60,
    endpointMs: 300,
    pauseMs: PREPARE_AFTER_MS,
  });
  const turn = new TurnStage(conv, { settings: platformTurnSettings(), inRate: RATE, streaming: true });
  const p = new Pipeline(
    [vad, turn],
    (f) => out.push(f),
    (_stage, e) => errors.push(e),
  );
  // What the VAD hands the turn stage, to wait on its scoring.
  vad.connect(
    (f) => {
      seen.push(f);
      turn.push(f);
    },
    () => {},
  );
  const { audio, silence, clock } = callerAudio((f) => {
    clockMs = f.kind === 'audio-in' ? f.atMs + 20 : clockMs;
    p.push(f);
  }, RATE);
  const scored = async (untilMs: number) => {
    const deadline = Date.now() + 20_000;
    while (!seen.some((f) => f.kind === 'vad-frame' && f.endMs >= untilMs - 40)) {
      if (Date.now() > deadline) throw new Error(`VAD did not score up to ${untilMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const utterances = () => out.flatMap((f) => (f.kind === 'utterance' ? [f] : []));
  const transcript = (text: string, final: boolean, endMs: number) =>
    p.push({ kind: 'transcript', text, final, atMs: clockMs, endMs });
  return { agent, seen, out, errors, audio, silence, clock, scored, utterances, transcript };
}

describe('turn stage: speech that began over the agent and outlived it', () => {
  it('is the caller’s turn when the agent finishes while they go on (answering over its last words)', async () => {
    const c = callerSide();
    const text = 'I would like to book a cleaning for next Tuesday morning.';
    const pcm = await fliteUtterance(text, RATE);
    c.silence(200);
    // The caller starts 400 ms before the agent's last word ends: no words yet, under forceMs (no barge-in).
    const overlap = Math.round(0.4 * RATE) * 2;
    c.audio(pcm.subarray(0, overlap));
    await c.scored(c.clock.atMs);
    expect(c.seen.some((f) => f.kind === 'speech-start')).toBe(true);
    c.agent.speaking = false;
    c.audio(pcm.subarray(overlap));
    const spokenMs = c.clock.atMs;
    await c.scored(spokenMs);
    c.silence(200);
    await c.scored(c.clock.atMs);
    // The streaming STT's final, 200 ms after the words; then the silence that ends the turn.
    c.transcript(text, true, spokenMs);
    c.silence(1200);
    await c.scored(c.clock.atMs);
    expect(c.out.some((f) => f.kind === 'interrupt')).toBe(false);
    expect(c.utterances().map((u) => u.text)).toEqual([text]);
    expect(c.errors).toEqual([]);
  });

  it('is still no turn when all it says is a backchannel ("mm-hm" over the agent’s last words)', async () => {
    const c = callerSide();
    const pcm = await fliteUtterance('okay then, sure', RATE);
    c.silence(200);
    const overlap = Math.round(0.5 * RATE) * 2;
    c.audio(pcm.subarray(0, overlap));
    await c.scored(c.clock.atMs);
    expect(c.seen.some((f) => f.kind === 'speech-start')).toBe(true);
    c.agent.speaking = false;
    c.audio(pcm.subarray(overlap));
    const spokenMs = c.clock.atMs;
    c.silence(200);
    await c.scored(c.clock.atMs);
    // What the STT made of it: a backchannel.
    c.transcript('Mm-hmm.', true, spokenMs);
    c.silence(1200);
    await c.scored(c.clock.atMs);
    expect(c.seen.some((f) => f.kind === 'speech-end')).toBe(true);
    expect(c.utterances()).toEqual([]);
    expect(c.errors).toEqual([]);
  });
});
