import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { SileroVad } from '../../shared/engines/vad/silero.ts';
import { Conversation } from '../../workers/realtime/pipeline/conversation.ts';
import type { DataFrame, Frame, UpstreamFrame } from '../../workers/realtime/pipeline/frames.ts';
import { Pipeline, Stage } from '../../workers/realtime/pipeline/stage.ts';
import { PREPARE_AFTER_MS } from '../../workers/realtime/pipeline/turn/evidence-turn-detector.ts';
import { TurnStage } from '../../workers/realtime/pipeline/turn/turn-stage.ts';
import { VadStage } from '../../workers/realtime/pipeline/input/vad-stage.ts';
import { Playback } from '../../workers/realtime/pipeline/playback.ts';
import type { SessionSettings } from '../../workers/realtime/call/types.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import { callerAudio } from '../../support/realtime/caller-audio.ts';

const RATE = 8000;
const SETTINGS: SessionSettings = {
  endpointing: {
    fixedMs: 300,
    adaptive: true,
    completeMs: 200,
    incompleteMs: 1500,
    preemptive: false,
    eagerness: 'normal',
  },
  bargeInMinMs: 300,
  bargeInForceMs: 1500,
  maxSessionSeconds: 60,
  vadThreshold: 0.5,
  // Long: the utterance is handed on when its final is in, never because this wait ran out.
  finalWaitMs: 20_000,
  amd: false,
};

/** Records the frames between the VAD and the turn stage (they go on unchanged). */
class Tap extends Stage {
  readonly seen: Frame[] = [];
  readonly up: UpstreamFrame[] = [];
  constructor() {
    super('tap', { sync: true });
  }
  override push(frame: Frame): void {
    this.seen.push(frame);
    super.push(frame);
  }
  override pushUp(frame: UpstreamFrame): void {
    this.up.push(frame);
    super.pushUp(frame);
  }
  protected override onData(frame: DataFrame): void {
    this.emit(frame);
  }
}

/**
 * The caller half of the voice pipeline on the real Silero VAD and flite speech: VAD → turn stage, with the
 * transcripts a (lagging) streaming STT would send pushed at the head. A final that comes after the endpoint and
 * reads unfinished takes the endpoint back (`reopen` upstream, `speech-reopened` down); a finished one does not.
 */
function callerSide() {
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const playback = new Playback({ outRate: RATE, sendAudio: () => {}, sendMark: () => {}, sendClear: () => {} }, now);
  const conv = new Conversation(now, playback, 'dev_test');
  const tap = new Tap();
  const out: Frame[] = [];
  const errors: unknown[] = [];
  const p = new Pipeline(
    [
      new VadStage(new SileroVad(), RATE, { threshold: 0.5, startMs: 60, endpointMs: 300, pauseMs: PREPARE_AFTER_MS }),
      tap,
      new TurnStage(conv, { settings: SETTINGS, inRate: RATE, streaming: true }),
    ],
    (f) => out.push(f),
    (_stage, e) => errors.push(e),
  );
  const { audio, silence } = callerAudio((f) => p.push(f), RATE);
  const until = async (pred: () => boolean, what: string) => {
    const deadline = Date.now() + 20_000;
    while (!pred()) {
      if (Date.now() > deadline) {
        const seen = tap.seen.filter((f) => f.kind !== 'audio-in' && f.kind !== 'vad-frame');
        throw new Error(`${what}: not seen; tap got ${JSON.stringify(seen)}, sent up ${JSON.stringify(tap.up)}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const utterances = () => out.flatMap((f) => (f.kind === 'utterance' ? [f] : []));
  return { p, tap, out, errors, audio, silence, until, utterances };
}

/**
 * The caller says `text`; the STT's interim has the words before the last (`heard`, timed to the end of the audio,
 * as a lagging STT re-times them), and the endpoint is reached on it before any final; `silenceMs` of silence
 * follow (the window an interim without punctuation asks for passes within it).
 */
async function endedUtterance(text: string, heard: string, silenceMs: number) {
  const c = callerSide();
  const pcm = await fliteUtterance(text, RATE);
  c.p.push({ kind: 'start' });
  c.silence(200);
  c.audio(pcm);
  const spokenMs = 200 + (pcm.length / 2 / RATE) * 1000;
  // The interim comes once the VAD has heard the speech (as a streaming STT's does, behind the audio).
  await c.until(() => c.tap.seen.some((f) => f.kind === 'vad-frame' && f.endMs >= spokenMs - 40), 'speech scored');
  c.p.push({ kind: 'transcript', text: heard, final: false, atMs: 0, endMs: spokenMs });
  c.silence(silenceMs);
  await c.until(() => c.tap.seen.some((f) => f.kind === 'speech-end'), 'speech-end');
  const end = c.tap.seen.find((f) => f.kind === 'speech-end');
  if (end?.kind !== 'speech-end') throw new Error('no speech-end');
  // No final yet: the turn waits for the words.
  expect(c.utterances()).toEqual([]);
  return { c, end };
}

describe('turn stage: a late final that reads unfinished reopens the utterance', () => {
  it('takes the endpoint back; the turn ends after the longer window its words ask for, in one utterance', async () => {
    const text = 'I want to come in on Tuesday because';
    const { c, end } = await endedUtterance(text, 'I want to come in on Tuesday', 1400);
    c.p.push({ kind: 'transcript', text, final: true, atMs: 0, endMs: end.lastSpeechMs });
    expect(c.tap.seen.some((f) => f.kind === 'speech-reopened')).toBe(true);
    expect(c.utterances()).toEqual([]);
    c.silence(2500);
    await c.until(() => c.utterances().length === 1, 'utterance');
    const [u] = c.utterances();
    expect(u!.text).toBe(text);
    // Audio time: the silence the turn finally ended on is longer than the fixed window it first ended on.
    expect(u!.endpointWaitMs).toBeGreaterThan(end.atMs - end.lastSpeechMs);
    expect(c.errors).toEqual([]);
  });

  it('hands a finished sentence on at once: no reopening', async () => {
    const text = 'I would like a cleaning on Tuesday.';
    const { c, end } = await endedUtterance(text, 'I would like a cleaning', 800);
    c.p.push({ kind: 'transcript', text, final: true, atMs: 0, endMs: end.lastSpeechMs });
    expect(c.tap.seen.some((f) => f.kind === 'speech-reopened')).toBe(false);
    expect(c.utterances().map((u) => u.text)).toEqual([text]);
    expect(c.errors).toEqual([]);
  });
});
