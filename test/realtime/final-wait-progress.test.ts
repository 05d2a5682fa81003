import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventQueue } from '../../shared/engines/stt/vendors/event-queue.ts';
import {
  SttEngine,
  type SttCapabilities,
  type SttStream,
  type SttStreamEvent,
  type TranscriptionResult,
} from '../../shared/engines/stt/types.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { Conversation } from '../../workers/realtime/pipeline/conversation.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { SttStage } from '../../workers/realtime/pipeline/input/stt-stage.ts';
import { Playback } from '../../workers/realtime/pipeline/playback.ts';
import { TurnStage } from '../../workers/realtime/pipeline/turn/turn-stage.ts';
import { platformTurnSettings } from '../../support/realtime/caller-audio.ts';

const RATE = 8000;
/** The local recogniser's wait for its final (bootstrap.ts's finalWaitMs). */
const SETTINGS = platformTurnSettings({ finalWaitMs: 5000 });

/**
 * The local recogniser's side of the seam, driven by the test: what a ps-stream channel reports (partials, finals,
 * progress), pushed when the test says, as a CPU-starved recogniser would report them.
 */
class ScriptedLocalStt extends SttEngine {
  readonly provider = 'default';
  readonly label = 'scripted local recogniser';
  readonly capabilities: SttCapabilities = {
    streaming: true,
    diarization: false,
    wordTimestamps: false,
    sampleRates: [RATE],
    languages: ['en'],
    requiresKey: false,
  };
  readonly events = new EventQueue<SttStreamEvent>();

  protected _transcribe(): Promise<TranscriptionResult> {
    throw new Error('not used');
  }

  protected override _stream(): SttStream {
    return { events: this.events, write: () => {}, end: () => {}, close: () => this.events.end() };
  }

  /** How far it has decoded, and up to where its finals are out (ms of the call's audio). */
  progress(decodedMs: number, settledMs: number): void {
    this.events.push({ type: 'progress', decoded: decodedMs / 1000, settled: settledMs / 1000 });
  }
}

/**
 * The real STT and turn stages on fake timers: the caller speaks 1.5 s and stops; the VAD's endpoint is at 1.8 s of
 * audio; the recogniser has sent a partial and, behind the audio, has decoded 1.2 s.
 */
async function endpointWhileBehind() {
  const engine = new ScriptedLocalStt();
  const now = () => Date.now();
  const playback = new Playback({ outRate: RATE, sendAudio: () => {}, sendMark: () => {}, sendClear: () => {} }, now);
  const conv = new Conversation(now, playback, 'dev_test');
  const stt = new SttStage(engine, { inRate: RATE, language: 'en', now, log: createLogger('silent') });
  const turns = new TurnStage(conv, { settings: SETTINGS, inRate: RATE, streaming: true });
  const out: Frame[] = [];
  stt.connect((f) => turns.push(f));
  turns.connect(
    (f) => out.push(f),
    () => {},
  );
  let audioMs = 0;
  const audio = (ms: number, speech: boolean) => {
    for (let t = 0; t < ms; t += 20) {
      stt.push({ kind: 'audio-in', pcm: Buffer.alloc((RATE / 50) * 2), sampleRate: RATE, atMs: audioMs });
      audioMs += 20;
      stt.push({ kind: 'vad-frame', endMs: audioMs, lastSpeechMs: speech ? audioMs : 1500 });
    }
  };
  stt.push({ kind: 'start' });
  stt.push({ kind: 'speech-start', atMs: 0, soundOnsetMs: 0 });
  audio(1500, true);
  engine.events.push({ type: 'partial', text: 'I would like' });
  engine.progress(1200, 300);
  await vi.advanceTimersByTimeAsync(0);
  audio(300, false);
  stt.push({ kind: 'speech-end', atMs: 1800, lastSpeechMs: 1500 });
  await vi.advanceTimersByTimeAsync(0);
  const utterances = () => out.flatMap((f) => (f.kind === 'utterance' ? [f.text] : []));
  return { engine, utterances };
}

describe('the wait for a final from a recogniser that reports its progress', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a starved recogniser still decoding toward the endpoint is waited for past its 5 s: its late final is the turn', async () => {
    vi.useFakeTimers();
    const c = await endpointWhileBehind();
    // 150 ms of audio decoded a second: far behind, but moving.
    let decoded = 1200;
    for (let s = 0; s < 7; s++) {
      await vi.advanceTimersByTimeAsync(1000);
      decoded += 150;
      c.engine.progress(decoded, 300);
    }
    // Past the engine's 5 s the turn was taken from the partial before; now it waits.
    expect(c.utterances()).toEqual([]);
    c.engine.events.push({ type: 'final', text: 'I would like to book a cleaning', start: 0.3, end: 1.5 });
    await vi.advanceTimersByTimeAsync(0);
    expect(c.utterances()).toEqual(['I would like to book a cleaning']);
  });

  it('settled past the endpoint with no final (it heard no more words): the turn goes on at once', async () => {
    vi.useFakeTimers();
    const c = await endpointWhileBehind();
    await vi.advanceTimersByTimeAsync(1000);
    c.engine.progress(1700, 300);
    await vi.advanceTimersByTimeAsync(0);
    expect(c.utterances()).toEqual([]);
    // Its utterance ended without a final past the endpoint: nothing more is coming for this speech.
    c.engine.progress(1900, 1900);
    await vi.advanceTimersByTimeAsync(0);
    expect(c.utterances()).toEqual(['I would like']);
  });

  it('a recogniser that stopped moving holds the turn no longer than its own wait', async () => {
    vi.useFakeTimers();
    const c = await endpointWhileBehind();
    await vi.advanceTimersByTimeAsync(4900);
    expect(c.utterances()).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(c.utterances()).toEqual(['I would like']);
  });

  it('one that moves but never gets there is given up on at the ceiling (20 s from the endpoint)', async () => {
    vi.useFakeTimers();
    const c = await endpointWhileBehind();
    let decoded = 1200;
    for (let s = 0; s < 18; s++) {
      await vi.advanceTimersByTimeAsync(1000);
      c.engine.progress((decoded += 10), 300);
    }
    expect(c.utterances()).toEqual([]);
    for (let s = 0; s < 3; s++) {
      await vi.advanceTimersByTimeAsync(1000);
      c.engine.progress((decoded += 10), 300);
    }
    expect(c.utterances()).toEqual(['I would like']);
  });

  it('decoded well past the endpoint with its utterance still open (it hears line noise): the usual 5 s', async () => {
    vi.useFakeTimers();
    const c = await endpointWhileBehind();
    await vi.advanceTimersByTimeAsync(1000);
    c.engine.progress(3000, 300);
    await vi.advanceTimersByTimeAsync(3900);
    expect(c.utterances()).toEqual([]);
    c.engine.progress(3100, 300);
    await vi.advanceTimersByTimeAsync(200);
    expect(c.utterances()).toEqual(['I would like']);
  });
});
