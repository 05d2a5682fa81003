import { afterEach, describe, expect, it, vi } from 'vitest';
import { Conversation } from '../../workers/realtime/pipeline/conversation.ts';
import type { Frame, UpstreamFrame } from '../../workers/realtime/pipeline/frames.ts';
import { TurnDetector, type TurnDetectorEvent } from '../../workers/realtime/pipeline/input/turn-detector.ts';
import { Playback } from '../../workers/realtime/pipeline/playback.ts';
import { TurnStage } from '../../workers/realtime/pipeline/turn/turn-stage.ts';
import { platformTurnSettings } from '../../support/realtime/caller-audio.ts';

const RATE = 8000;
const STEP_MS = 20;
const SETTINGS = platformTurnSettings({ finalWaitMs: 1200 });
/** The agent test suite's first caller turn: "Hi, are you | open on Saturday morning?", a 400 ms pause in it. */
const QUESTION = 'Hi, are you open on Saturday morning?';
const QUESTION_SPEECH: [number, number][] = [
  [1000, 2000],
  [2400, 3600],
];

/** The caller's script: stretches of speech (audio ms) and the streaming STT's results, each at the audio time it comes. */
interface CallerScript {
  speech: [number, number][];
  transcripts: { atMs: number; text: string; final: boolean; endMs: number }[];
}

const ASKS: CallerScript = {
  speech: QUESTION_SPEECH,
  transcripts: [
    { atMs: 2100, text: 'hi are you', final: false, endMs: 2000 },
    { atMs: 3300, text: 'hi are you open on saturday', final: false, endMs: 3200 },
    { atMs: 3800, text: QUESTION, final: true, endMs: 3600 },
  ],
};

/**
 * The real turn stage on a real conversation and playback, on a clock the test moves (the final wait is a timer:
 * fake timers move with it). Caller audio reaches it as it comes, and the STT's results at their audio times; the
 * VAD's verdicts (the real speech rules of input/turn-detector.ts, over the script's speech as the model would score
 * it, obeying the endpoint windows the stage sends upstream) come `vadLagMs` behind the audio, as batched Silero's do
 * in a starved process. The reply stage's part is played too: a caller turn opens the agent's reply, whose audio
 * starts `thinkMs` later and lasts `replyMs`.
 */
function lateVadCall(script: CallerScript, opts: { vadLagMs: number; thinkMs: number; replyMs: number }) {
  let clock = 0;
  const now = () => clock;
  const marks: string[] = [];
  const sink = { outRate: RATE, sendAudio: () => {}, sendMark: (m: string) => marks.push(m), sendClear: () => {} };
  const playback = new Playback(sink, now);
  const conv = new Conversation(now, playback, 'dev_test');
  const stage = new TurnStage(conv, { settings: SETTINGS, inRate: RATE, streaming: true });
  const vad = new TurnDetector({ threshold: 0.5, startMs: 60, endpointMs: SETTINGS.endpointing.fixedMs });
  const out: Frame[] = [];
  let audioMs = 0;
  let vadMs = 0;
  let replyAudioAt: number | null = null;
  let replyEndAt: number | null = null;
  /** Where the VAD had scored up to when each caller turn was handed on. */
  const vadAtTurns: number[] = [];
  /** Whether the agent was speaking or thinking as each of the VAD's speech starts came. */
  const agentAtStarts: boolean[] = [];

  const report = (ev: TurnDetectorEvent | null) => {
    if (ev?.type === 'start') agentAtStarts.push(conv.agentActive);
    if (ev?.type === 'start') stage.push({ kind: 'speech-start', atMs: ev.onsetMs, soundOnsetMs: ev.onsetMs });
    else if (ev?.type === 'pause') stage.push({ kind: 'speech-pause', atMs: ev.atMs, lastSpeechMs: ev.lastSpeechMs });
    else if (ev?.type === 'resume') stage.push({ kind: 'speech-resume', atMs: ev.atMs });
    else if (ev?.type === 'end') stage.push({ kind: 'speech-end', atMs: ev.atMs, lastSpeechMs: ev.lastSpeechMs });
  };
  // What the VAD stage does with what the turn stage sends it (vad-stage.ts onUpstream).
  const upstream = (f: UpstreamFrame) => {
    if (f.kind === 'heard-speech') return report(vad.heardSpeechUntil(f.untilMs));
    if (f.kind === 'speech-ended-at') return vad.speechEndedAt(f.atMs);
    if (f.kind === 'reopen') {
      if (vad.reopen(f.onsetMs, f.lastSpeechMs, f.endpointMs))
        stage.push({ kind: 'speech-reopened', lastSpeechMs: vad.lastSpeechMs });
      return;
    }
    if (f.kind === 'end-speech') return report(vad.endSpeech(f.lastSpeechMs));
    vad.setEndpointMs(f.endpointMs);
    if (f.pauseMs !== undefined) vad.setPauseMs(f.pauseMs);
  };
  stage.connect((f) => {
    out.push(f);
    if (f.kind === 'utterance') {
      vadAtTurns.push(vadMs);
      conv.newTurn(f.text, f.lastSpeechAt, f.endpointAt);
      replyAudioAt = clock + opts.thinkMs;
    }
  }, upstream);

  const speaking = (ms: number) => script.speech.some(([from, to]) => ms >= from && ms < to);
  /** 20 ms more of the call: its audio, the STT's results due by then, and the VAD's verdicts up to its lag. */
  const step = () => {
    stage.push({ kind: 'audio-in', pcm: Buffer.alloc((RATE / 50) * 2), sampleRate: RATE, atMs: audioMs });
    audioMs += STEP_MS;
    clock += STEP_MS;
    vi.advanceTimersByTime(STEP_MS);
    for (const t of script.transcripts)
      if (t.atMs > audioMs - STEP_MS && t.atMs <= audioMs)
        stage.push({ kind: 'transcript', text: t.text, final: t.final, atMs: clock, endMs: t.endMs });
    const reply = conv.current;
    if (reply && replyAudioAt !== null && clock >= replyAudioAt) {
      replyAudioAt = null;
      replyEndAt = clock + opts.replyMs;
      playback.sendAudio(Buffer.alloc((RATE / 1000) * 2 * opts.replyMs));
      playback.endSentence(reply.id, 0, 'Yes, on Saturday we open at nine and close at noon.', clock);
    }
    // The far end played it all: its mark comes back and the reply closes, whole (the playback stage's part).
    if (reply && replyEndAt !== null && clock >= replyEndAt) {
      replyEndAt = null;
      for (const m of marks.splice(0)) playback.onMark(m);
      conv.closeTurn(reply, false);
    }
    while (vadMs + STEP_MS <= audioMs - opts.vadLagMs) {
      const at = vadMs;
      vadMs += STEP_MS;
      report(vad.push(speaking(at) ? 0.9 : 0.02, at, STEP_MS));
      stage.push({ kind: 'vad-frame', endMs: vadMs, lastSpeechMs: vad.lastSpeechMs });
    }
  };
  return {
    out,
    conv,
    vadAtTurns,
    agentAtStarts,
    /** Plays the call until `ms` of audio, then the VAD catches up and the STT's longest wait passes. */
    until(ms: number) {
      while (audioMs < ms) step();
    },
    utterances: () => out.flatMap((f) => (f.kind === 'utterance' ? [f.text] : [])),
    stops: () => out.flatMap((f) => (f.kind === 'interrupt' || f.kind === 'hold-playback' ? [f.kind] : [])),
    interruptAt: () => out.find((f) => f.kind === 'interrupt')?.atMs ?? null,
  };
}

describe('barge-in judged by audio time: a VAD late behind the STT', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("the late-scored rest of the caller's question is theirs, not speech over the reply: the reply is kept", () => {
    vi.useFakeTimers();
    const c = lateVadCall(ASKS, { vadLagMs: 3000, thinkMs: 400, replyMs: 9000 });
    c.until(12_000);
    // The ordering of the failure: the turn was handed on (its final covers the question) while the VAD had heard
    // only "Hi, are you" and the pause; the rest of the question was scored after, with the reply under way.
    expect(c.vadAtTurns[0]).toBeLessThan(QUESTION_SPEECH[1]![0]);
    expect(c.agentAtStarts).toEqual([false, true]);
    expect(c.stops()).toEqual([]);
    expect(c.utterances()).toEqual([QUESTION]);
    expect(c.conv.current?.closed).toBe(false);
    expect(c.conv.agentActive).toBe(true);
  });

  it('when the reply is over before the VAD catches up, the late speech is no empty caller turn', () => {
    vi.useFakeTimers();
    const c = lateVadCall(ASKS, { vadLagMs: 3000, thinkMs: 0, replyMs: 100 });
    c.until(12_000);
    expect(c.agentAtStarts).toEqual([false, false]);
    expect(c.utterances()).toEqual([QUESTION]);
    expect(c.stops()).toEqual([]);
  });

  it('speech that goes on past the turn’s end still interrupts, timed from that end like any barge-in', () => {
    vi.useFakeTimers();
    // The caller does not stop at the end of their words as the STT timed them: 1 s more of speech, no words.
    const on: CallerScript = { ...ASKS, speech: [QUESTION_SPEECH[0]!, [2400, 4600]] };
    const c = lateVadCall(on, { vadLagMs: 3000, thinkMs: 400, replyMs: 6000 });
    c.until(12_000);
    expect(c.stops()).toEqual(['interrupt']);
    // long_speech at bargeInForceMs of speech past the turn's end (3600, the final's): the VAD reached it at 4500.
    const end = 3600;
    const decidedAtVadMs = c.interruptAt()! - 3000;
    expect(decidedAtVadMs).toBeGreaterThanOrEqual(end + SETTINGS.bargeInForceMs);
    expect(decidedAtVadMs).toBeLessThanOrEqual(end + SETTINGS.bargeInForceMs + STEP_MS);
  });

  it('a VAD in step with the audio: the question is one turn, and a barge-in over the reply is as fast as ever', () => {
    vi.useFakeTimers();
    const bargeIn: CallerScript = { speech: [...QUESTION_SPEECH, [6000, 7500]], transcripts: ASKS.transcripts };
    const c = lateVadCall(bargeIn, { vadLagMs: 0, thinkMs: 400, replyMs: 6000 });
    c.until(9000);
    expect(c.utterances()[0]).toBe(QUESTION);
    expect(c.stops()).toEqual(['interrupt']);
    // Speech with no words: long_speech once it has lasted bargeInForceMs from its onset (the VAD's first frame).
    const at = c.interruptAt()!;
    expect(at).toBeGreaterThanOrEqual(6000 + SETTINGS.bargeInForceMs);
    expect(at).toBeLessThanOrEqual(6000 + SETTINGS.bargeInForceMs + STEP_MS);
  });
});
