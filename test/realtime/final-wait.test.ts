import { afterEach, describe, expect, it, vi } from 'vitest';
import { Conversation } from '../../workers/realtime/pipeline/conversation.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { Playback } from '../../workers/realtime/pipeline/playback.ts';
import { TurnStage } from '../../workers/realtime/pipeline/turn/turn-stage.ts';
import { platformTurnSettings } from '../../support/realtime/caller-audio.ts';

const RATE = 8000;
/** A vendor STT's wait for its final (1.2 s), and the local recogniser's (5 s) once the call has fallen back to it. */
const SETTINGS = platformTurnSettings({ finalWaitMs: 1200, finalWaitMsBy: { default: 5000 } });

/**
 * The real turn stage on a clock the test moves (the wait for a final is a timer: fake timers move it): the VAD
 * hears the caller speak and stop, the STT has sent a partial and no final yet; `engine` is the STT engine hearing
 * the call at the endpoint.
 */
function endpointWithoutFinal(initialEngine: string) {
  let engine = initialEngine;
  let clock = 0;
  const now = () => clock;
  const playback = new Playback({ outRate: RATE, sendAudio: () => {}, sendMark: () => {}, sendClear: () => {} }, now);
  const conv = new Conversation(now, playback, 'dev_test');
  const stage = new TurnStage(conv, { settings: SETTINGS, inRate: RATE, streaming: true, sttEngine: () => engine });
  const out: Frame[] = [];
  stage.connect(
    (f) => out.push(f),
    () => {},
  );
  let audioMs = 0;
  const audio = (ms: number) => {
    for (let t = 0; t < ms; t += 20) {
      stage.push({ kind: 'audio-in', pcm: Buffer.alloc((RATE / 50) * 2), sampleRate: RATE, atMs: audioMs });
      audioMs += 20;
      clock += 20;
      stage.push({ kind: 'vad-frame', endMs: audioMs, lastSpeechMs: audioMs });
    }
  };
  stage.push({ kind: 'speech-start', atMs: 0, soundOnsetMs: 0 });
  audio(1500);
  stage.push({ kind: 'transcript', text: 'I would like', final: false, atMs: clock, endMs: audioMs });
  audio(300);
  stage.push({ kind: 'speech-end', atMs: audioMs, lastSpeechMs: audioMs - 300 });
  const utterances = () => out.flatMap((f) => (f.kind === 'utterance' ? [f.text] : []));
  const final = (text: string) =>
    stage.push({ kind: 'transcript', text, final: true, atMs: clock, endMs: audioMs - 300, engine });
  return { utterances, final, failOver: (to: string) => (engine = to) };
}

describe('the wait for a final follows the STT engine hearing the call', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("on the call's own (vendor) engine, the turn goes on with the partial once its wait has passed", () => {
    vi.useFakeTimers();
    const c = endpointWithoutFinal('deepgram');
    vi.advanceTimersByTime(1100);
    expect(c.utterances()).toEqual([]);
    vi.advanceTimersByTime(200);
    expect(c.utterances()).toEqual(['I would like']);
  });

  it('after a failover to the local recogniser, its longer wait: a late final is still the turn', () => {
    vi.useFakeTimers();
    const c = endpointWithoutFinal('default');
    // Past the vendor's wait: the local recogniser, behind the audio on a busy CPU, has not finalized yet.
    vi.advanceTimersByTime(3000);
    expect(c.utterances()).toEqual([]);
    c.final('I would like to book a cleaning next week.');
    expect(c.utterances()).toEqual(['I would like to book a cleaning next week.']);
    // And when it never comes, its own wait ends the turn all the same.
    const lost = endpointWithoutFinal('default');
    vi.advanceTimersByTime(5100);
    expect(lost.utterances()).toEqual(['I would like']);
  });

  it("a failover after the endpoint (the vendor's socket dropped as the caller stopped) gets the longer wait too", () => {
    vi.useFakeTimers();
    const c = endpointWithoutFinal('deepgram');
    vi.advanceTimersByTime(1000);
    c.failOver('default');
    vi.advanceTimersByTime(3000);
    expect(c.utterances()).toEqual([]);
    vi.advanceTimersByTime(1100);
    expect(c.utterances()).toEqual(['I would like']);
  });
});
