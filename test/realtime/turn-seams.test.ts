import { describe, expect, it } from 'vitest';
import {
  INTERRUPTION_DETECTORS,
  InterruptionChoice,
  TURN_DETECTORS,
} from '../../shared/kernel/contracts/turn-seams.ts';
import { Conversation } from '../../workers/realtime/pipeline/conversation.ts';
import type { Frame, UpstreamFrame } from '../../workers/realtime/pipeline/frames.ts';
import { EvidenceTurnDetector } from '../../workers/realtime/pipeline/turn/evidence-turn-detector.ts';
import type { InterruptionDetector } from '../../workers/realtime/pipeline/turn/interruption.ts';
import {
  INTERRUPTION_REGISTRY,
  interruptionDetector,
} from '../../workers/realtime/pipeline/turn/interruption-registry.ts';
import type { TurnDetector } from '../../workers/realtime/pipeline/turn/turn-detector.ts';
import { TURN_DETECTOR_REGISTRY, turnDetector } from '../../workers/realtime/pipeline/turn/turn-detector-registry.ts';
import { TurnStage } from '../../workers/realtime/pipeline/turn/turn-stage.ts';
import { Playback } from '../../workers/realtime/pipeline/playback.ts';
import type { SessionSettings } from '../../workers/realtime/call/types.ts';

const RATE = 8000;
const SETTINGS: SessionSettings = {
  endpointing: {
    fixedMs: 500,
    adaptive: true,
    completeMs: 250,
    incompleteMs: 1500,
    preemptive: false,
    eagerness: 'normal',
  },
  bargeInMinMs: 200,
  bargeInForceMs: 900,
  maxSessionSeconds: 60,
  vadThreshold: 0.5,
  finalWaitMs: 20_000,
  amd: false,
};
const PLATFORM = { bargeInMinMs: SETTINGS.bargeInMinMs, bargeInForceMs: SETTINGS.bargeInForceMs };

/**
 * The real turn stage on a real conversation and playback, fed the frames the VAD and the STT send it (20 ms of
 * caller audio at a time, each scored by the VAD), on a clock the test moves: the agent is made to think (a reply
 * open, no audio) or to speak (audio sent), and the caller speaks over it.
 */
function callerOverAgent(seams: { interruption?: InterruptionDetector; detector?: TurnDetector } = {}) {
  let clock = 0;
  const now = () => clock;
  const playback = new Playback({ outRate: RATE, sendAudio: () => {}, sendMark: () => {}, sendClear: () => {} }, now);
  const conv = new Conversation(now, playback, 'dev_test');
  const stage = new TurnStage(conv, { settings: SETTINGS, inRate: RATE, streaming: true, ...seams });
  const out: Frame[] = [];
  const up: UpstreamFrame[] = [];
  stage.connect(
    (f) => out.push(f),
    (f) => up.push(f),
  );
  let audioMs = 0;
  /** `ms` of caller audio, each 20 ms scored by the VAD. */
  const audio = (ms: number) => {
    for (let t = 0; t < ms; t += 20) {
      stage.push({ kind: 'audio-in', pcm: Buffer.alloc((RATE / 50) * 2), sampleRate: RATE, atMs: audioMs });
      audioMs += 20;
      clock += 20;
      stage.push({ kind: 'vad-frame', endMs: audioMs, lastSpeechMs: audioMs });
    }
  };
  return {
    out,
    up,
    audio,
    think: () => conv.newTurn('What are your opening hours?', 0, 0),
    speak: () => {
      conv.newTurn('What are your opening hours?', 0, 0);
      playback.sendAudio(Buffer.alloc((RATE / 50) * 2 * 10));
    },
    speechStart: () => stage.push({ kind: 'speech-start', atMs: audioMs }),
    heard: (text: string, final: boolean) =>
      stage.push({ kind: 'transcript', text, final, atMs: clock, endMs: audioMs }),
    interrupts: () => out.flatMap((f) => (f.kind === 'interrupt' ? [f.reason] : [])),
    close: () => stage.push({ kind: 'end', reason: 'agent-ended' }),
  };
}

describe('interruption seam: the registry', () => {
  it('has one implementation for every name in the contract, and the default when the agent names none', () => {
    expect(Object.keys(INTERRUPTION_REGISTRY).sort()).toEqual(Object.keys(INTERRUPTION_DETECTORS).sort());
    expect(interruptionDetector(PLATFORM).name).toBe('default');
    expect(interruptionDetector(PLATFORM, { name: 'vad-only' }).name).toBe('vad-only');
  });

  it('refuses an unknown name in the contract, listing the known ones', () => {
    const r = InterruptionChoice.safeParse({ name: 'semantic' });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toBe('turnTaking.interruption: name must be one of default, vad-only');
    expect(InterruptionChoice.safeParse({ name: 'vad-only', speaking: { forceMs: 500 } }).success).toBe(false);
  });
});

describe('interruption seam: a backchannel over the agent', () => {
  for (const phase of ['speak', 'think'] as const) {
    it(`default: "mm-hm" while the agent ${phase}s does not interrupt; "wait, stop" does`, () => {
      const c = callerOverAgent();
      c[phase]();
      c.speechStart();
      c.audio(100);
      c.heard('mm-hm', false);
      c.audio(400);
      c.heard('Mm-hm.', true);
      c.audio(100);
      expect(c.interrupts()).toEqual([]);
      c.close();

      const w = callerOverAgent();
      w[phase]();
      w.speechStart();
      w.audio(100);
      w.heard('wait stop', false);
      expect(w.interrupts()).toEqual([]); // under bargeInMinMs
      w.audio(120);
      expect(w.interrupts()).toEqual(['speech']);
      w.close();
    });
  }

  it('default: long speech with no words yet interrupts at bargeInForceMs', () => {
    const c = callerOverAgent();
    c.speak();
    c.speechStart();
    c.audio(860);
    expect(c.interrupts()).toEqual([]);
    c.audio(60);
    expect(c.interrupts()).toEqual(['long_speech']);
    c.close();
  });

  it('vad-only: "mm-hm" interrupts once it lasts minMs, before any words', () => {
    const c = callerOverAgent({ interruption: interruptionDetector(PLATFORM, { name: 'vad-only' }) });
    c.speak();
    c.speechStart();
    c.audio(180);
    expect(c.interrupts()).toEqual([]);
    c.audio(40);
    expect(c.interrupts()).toEqual(['speech']);
    c.heard('mm-hm', true);
    expect(c.interrupts()).toEqual(['speech']); // once
    c.close();
  });

  it('vad-only: separate thresholds while the agent speaks and while it thinks', () => {
    const choice = { name: 'vad-only', speaking: { minMs: 300 }, thinking: { minMs: 700 } } as const;
    const speaking = callerOverAgent({ interruption: interruptionDetector(PLATFORM, choice) });
    speaking.speak();
    speaking.speechStart();
    speaking.audio(340);
    expect(speaking.interrupts()).toEqual(['speech']);
    speaking.close();

    const thinking = callerOverAgent({ interruption: interruptionDetector(PLATFORM, choice) });
    thinking.think();
    thinking.speechStart();
    thinking.audio(500);
    expect(thinking.interrupts()).toEqual([]);
    thinking.audio(240);
    expect(thinking.interrupts()).toEqual(['speech']);
    thinking.close();
  });

  it('default: per-phase minMs moves the barge-in on words', () => {
    const choice = { name: 'default', thinking: { minMs: 600 } } as const;
    const c = callerOverAgent({ interruption: interruptionDetector(PLATFORM, choice) });
    c.think();
    c.speechStart();
    c.audio(100);
    c.heard('wait stop', false);
    c.audio(300);
    expect(c.interrupts()).toEqual([]);
    c.audio(240);
    expect(c.interrupts()).toEqual(['speech']);
    c.close();
  });
});

describe('turn-detector seam', () => {
  it('has one implementation for every name in the contract; `default` is the evidence detector', () => {
    expect(Object.keys(TURN_DETECTOR_REGISTRY).sort()).toEqual(Object.keys(TURN_DETECTORS).sort());
    const d = turnDetector({ policy: SETTINGS.endpointing, inRate: RATE, streaming: true });
    expect(d).toBeInstanceOf(EvidenceTurnDetector);
  });

  it("default: today's windows — a closed sentence the short one, an unfinished one the long one", () => {
    const d = turnDetector({ policy: SETTINGS.endpointing, inRate: RATE, streaming: true });
    d.onUtteranceStart();
    d.onFinal(1000, 1200);
    expect(d.endpointWindowMs({ text: 'I need a table for two.', final: true }, 1000, false)).toBe(250);
    expect(d.endpointWindowMs({ text: 'I need a table for', final: true }, 1000, false)).toBe(1500);
    expect(d.prepareAfterMs('I need a table for two.')).toBe(30);
    expect(d.prepareVerdict('I need a table for two.', 1000)).toBe('prepare');
    expect(d.prepareVerdict('I need a table for', 1000)).toBe('unprepare');
    // Speech the words do not reach yet (the STT lags): wait for them.
    expect(d.prepareVerdict('I need a table for two.', 1400)).toBe('wait');
  });

  it('the turn stage sends the VAD the window its detector decides', () => {
    /** A detector that always asks for 777 ms of silence: a stand-in for a model-based one. */
    class FixedWindow extends EvidenceTurnDetector {
      override endpointWindowMs(): number {
        return 777;
      }
    }
    const c = callerOverAgent({
      detector: new FixedWindow({ policy: SETTINGS.endpointing, inRate: RATE, streaming: true }),
    });
    c.speechStart();
    c.audio(400);
    c.heard('I need a table for two.', true);
    const windows = c.up.flatMap((f) => (f.kind === 'endpoint-window' && f.reconsider ? [f.endpointMs] : []));
    expect(windows).toEqual([777]);
    c.close();
  });
});
