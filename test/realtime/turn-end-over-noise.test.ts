import { describe, expect, it } from 'vitest';
import { SileroVad } from '../../shared/engines/vad/silero.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { Pipeline } from '../../workers/realtime/pipeline/stage.ts';
import { PREPARE_AFTER_MS } from '../../workers/realtime/pipeline/turn/evidence-turn-detector.ts';
import { TurnStage } from '../../workers/realtime/pipeline/turn/turn-stage.ts';
import { VadStage } from '../../workers/realtime/pipeline/input/vad-stage.ts';
import { callerAudio, platformTurnSettings } from '../../support/realtime/caller-audio.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import { int16ToPcm, pcmToInt16 } from '../../shared/kernel/audio/pcm.ts';

const RATE = 8000;

/**
 * The caller half of the voice pipeline (real Silero VAD → turn stage, the platform's turn settings and `default`
 * interruption) with an agent the test stops: `agent.speaking` is what the turn stage reads as the agent's audio.
 */
function callerSide(finalWaitMs = 20_000) {
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
  const turn = new TurnStage(conv, { settings: platformTurnSettings({ finalWaitMs }), inRate: RATE, streaming: true });
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

describe('turn stage: speech after the words that the STT finds no words in (a voice behind the caller)', () => {
  it('decides the window again once the STT has heard past it: the finished sentence ends the turn', async () => {
    // A vendor's wait for a final: the final covers the caller's words, not the voice behind them.
    const c = callerSide(1200);
    c.agent.speaking = false;
    const text = 'I would like to book a cleaning.';
    const caller = await fliteUtterance(text, RATE);
    // Another voice on the line, 10 dB under the caller, from 300 ms before their last word on: the STT makes
    // nothing of it.
    const callerPcm = pcmToInt16(caller);
    const behind = pcmToInt16(await fliteUtterance('the weather was lovely all week long', RATE, 'rms'));
    const from = callerPcm.length - Math.round(0.3 * RATE);
    const line = new Int16Array(from + behind.length);
    line.set(callerPcm);
    for (let i = 0; i < behind.length; i++) line[from + i] = line[from + i]! + Math.round(behind[i]! / 3);
    const pcm = int16ToPcm(line);
    c.silence(200);
    const spokenMs = c.clock.atMs + (callerPcm.length / RATE) * 1000;
    // The final comes 200 ms after the caller's words, while the voice behind goes on.
    const finalAt = Math.round(((spokenMs + 200 - c.clock.atMs) / 1000) * RATE) * 2;
    c.audio(pcm.subarray(0, finalAt));
    await c.scored(c.clock.atMs);
    c.transcript(text, true, spokenMs);
    c.audio(pcm.subarray(finalAt));
    c.silence(1500);
    await c.scored(c.clock.atMs);
    const deadline = Date.now() + 10_000;
    while (c.utterances().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const behindScored = c.seen.some(
      (f) => f.kind === 'vad-frame' && f.lastSpeechMs > spokenMs + 300 && f.lastSpeechMs === f.endMs,
    );
    const [u] = c.utterances();
    expect(u?.text).toBe(text);
    // The VAD heard the voice behind as speech (else this tests nothing), and the turn ended on the complete
    // window once the STT had had it for its lag, not on the long one that words behind the speech ask for.
    expect(behindScored).toBe(true);
    expect(u!.endpointWaitMs).toBeLessThanOrEqual(300);
    expect(c.errors).toEqual([]);
  });
});

describe('turn stage: the VAD ends the turn with speech after the final’s words that brought no words', () => {
  it('hands it on once the STT has had that speech for its lag, not after the wait for a final that reaches it', () => {
    // The frames the VAD and a streaming STT send the turn stage (no levels: only the words and their timing).
    let nowMs = 0;
    const conv: ConstructorParameters<typeof TurnStage>[0] = {
      now: () => nowMs,
      agentActive: false,
      current: null,
      answeredBy: undefined,
      playback: { speaking: false } as ConstructorParameters<typeof TurnStage>[0]['playback'],
    };
    const turn = new TurnStage(conv, {
      settings: platformTurnSettings({ finalWaitMs: 1200 }),
      inRate: RATE,
      streaming: true,
    });
    const out: Frame[] = [];
    turn.connect(
      (f) => out.push(f),
      () => {},
    );
    let lastSpeechMs = 0;
    /** Audio up to `toMs`, the VAD scoring it as speech or not. */
    const until = (toMs: number, speech: boolean) => {
      for (; nowMs < toMs;) {
        turn.push({ kind: 'audio-in', pcm: Buffer.alloc((RATE / 50) * 2), sampleRate: RATE, atMs: nowMs });
        nowMs += 20;
        if (speech) lastSpeechMs = nowMs;
        turn.push({ kind: 'vad-frame', endMs: nowMs, lastSpeechMs });
      }
    };
    turn.push({ kind: 'speech-start', atMs: 0, soundOnsetMs: 0 });
    until(1000, true);
    // The caller's last word ends at 1000 ms; a voice behind them goes on to 1400 ms, and the final (200 ms after
    // the words) comes meanwhile.
    until(1200, true);
    const text = 'I would like to book a cleaning.';
    turn.push({ kind: 'transcript', text, final: true, atMs: nowMs, endMs: 1000 });
    until(1400, true);
    until(1600, false);
    turn.push({ kind: 'speech-end', atMs: 1600, lastSpeechMs: 1400 });
    // The voice behind resumes 300 ms later: had the turn still been waiting for a final, it would go on with it.
    until(1900, false);
    turn.push({ kind: 'speech-start', atMs: 1900, soundOnsetMs: 1900 });
    until(2500, true);
    const handed = out.flatMap((f) => (f.kind === 'utterance' ? [f] : []));
    expect(handed.map((u) => [u.text, u.endpointAt])).toEqual([[text, 1600]]);
  });
});
