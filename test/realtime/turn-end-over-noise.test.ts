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
import { addNoise, noiseRmsFor, noiseSource } from '../../shared/kernel/audio/noise.ts';
import { trimSilence } from '../../shared/kernel/audio/trim-silence.ts';
import { speechRms } from '../../shared/domains/agent-tests/impairments.ts';

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

/**
 * A caller's phrases (flite `kal`, 250 ms apart) over a crowd: three other flite voices at once (babble,
 * shared/kernel/audio/noise.ts), `snrDb` under the caller, on the line from 1.5 s before the caller to 3 s after
 * (`afterDb` under from the caller's last word on: a crowd that gets louder as they finish, but stays under them).
 * Returns the line and where (ms into it) each phrase ends.
 */
async function overCrowd(phrases: string[], snrDb: number, afterDb = snrDb, seed = 31) {
  const said = await Promise.all(phrases.map(async (t) => pcmToInt16(trimSilence(await fliteUtterance(t, RATE)))));
  const voices = await Promise.all(
    [
      ['awb', 'Please remember to bring the forms with you when you come in to sign the papers next week'],
      ['slt', 'We have been waiting for the train for almost an hour and nobody has told us anything yet'],
      ['rms', 'The shop on the corner closes early on Sundays so you should go there on Saturday instead'],
    ].map(async ([voice, t]) => pcmToInt16(await fliteUtterance(t!, RATE, voice))),
  );
  const gap = Math.round(0.25 * RATE);
  const lead = Math.round(1.5 * RATE);
  const caller = new Int16Array(said.reduce((n, x) => n + x.length, 0) + gap * (said.length - 1));
  const endsMs: number[] = [];
  let at = 0;
  for (const x of said) {
    caller.set(x, at);
    at += x.length;
    endsMs.push(((lead + at) / RATE) * 1000);
    at += gap;
  }
  const line = new Int16Array(lead + caller.length + 3 * RATE);
  const crowd = addNoise(new Int16Array(line.length), noiseSource({ type: 'babble', rate: RATE, seed, voices }), 1000);
  const rms = (db: number) => noiseRmsFor(speechRms(int16ToPcm(caller)), db) / 1000;
  const endAt = lead + at - gap;
  for (let i = 0; i < line.length; i++)
    line[i] = Math.max(-32768, Math.min(32767, (caller[i - lead] ?? 0) + crowd[i]! * rms(i < endAt ? snrDb : afterDb)));
  return { pcm: int16ToPcm(line), endsMs };
}

describe('turn stage: a caller’s turn over a crowd the VAD never hears stop', () => {
  /**
   * Plays `pcm` to the caller side as a call does: 80 ms at a time, each scored before the next (the VAD keeps up),
   * with each transcript reaching the turn stage when the audio reaches its `atMs` (a streaming STT's lag).
   */
  async function play(
    c: ReturnType<typeof callerSide>,
    pcm: Buffer,
    transcripts: Array<{ atMs: number; text: string; final: boolean; endMs: number }>,
  ) {
    c.agent.speaking = false;
    const step = Math.round(0.08 * RATE) * 2;
    const pending = [...transcripts];
    for (let off = 0; off < pcm.length; off += step) {
      while (pending.length > 0 && pending[0]!.atMs <= c.clock.atMs) {
        const t = pending.shift()!;
        c.transcript(t.text, t.final, t.endMs);
      }
      c.audio(pcm.subarray(off, off + step));
      await c.scored(c.clock.atMs);
    }
  }

  it('hands the turn on once the STT has had the window after the last word with no words, under the caller', async () => {
    const c = callerSide(1200);
    const text = 'I would like to book a cleaning for next Tuesday morning.';
    // A crowd 25 dB under the caller as they speak, 10 dB under from their last word on (this seed: the VAD never
    // hears it stop in the 3 s after).
    const { pcm, endsMs } = await overCrowd([text], 25, 10, 2);
    const lastWordMs = endsMs[0]!;
    await play(c, pcm, [{ atMs: lastWordMs + 200, text, final: true, endMs: lastWordMs }]);
    // The crowd is speech to the VAD long after the caller's last word (else this tests nothing)…
    const crowdScored = c.seen.some(
      (f) => f.kind === 'vad-frame' && f.lastSpeechMs > lastWordMs + 1500 && f.lastSpeechMs === f.endMs,
    );
    expect(crowdScored).toBe(true);
    // …and the turn is handed on, its speech ending with the caller's words, once the STT has had the window after
    // them (a closed sentence: 200 ms) and its lag with no more words: not when the crowd pauses, if it ever does.
    const [u] = c.utterances();
    expect(u?.text).toBe(text);
    expect(u!.lastSpeechAt).toBeLessThanOrEqual(lastWordMs + 20);
    expect(u!.endpointWaitMs).toBeLessThan(600);
    expect(c.errors).toEqual([]);
  });

  it('does not cut a caller who goes on at their own voice after a pause, before their next words come', async () => {
    const c = callerSide(1200);
    const first = 'I would like to book a cleaning';
    const rest = 'for next Tuesday morning, if you have anything.';
    const { pcm, endsMs } = await overCrowd([first, rest], 10);
    // The first phrase's final comes 200 ms after it; the next words only when the caller has said "for next"
    // (an interim 200 ms after that), well after the first phrase's window has passed.
    const resumedMs = endsMs[0]! + 250;
    await play(c, pcm, [
      { atMs: endsMs[0]! + 200, text: first, final: true, endMs: endsMs[0]! },
      { atMs: resumedMs + 800, text: 'for next', final: false, endMs: resumedMs + 600 },
      { atMs: endsMs[1]! + 200, text: rest, final: true, endMs: endsMs[1]! },
    ]);
    expect(c.utterances().map((u) => u.text)).toEqual([`${first} ${rest}`]);
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
