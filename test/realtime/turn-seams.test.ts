import { describe, expect, it } from 'vitest';
import { INTERRUPTION_DETECTORS, InterruptionChoice, TURN_DETECTORS } from '../../shared/contracts/turn-seams.ts';
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
import { mulberry32 } from '../../shared/kernel/prng.ts';

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
  /** `ms` of caller audio, each 20 ms scored by the VAD; `levelDb` (each frame's, or a constant): its level. */
  const audio = (ms: number, levelDb?: number | (() => number)) => {
    for (let t = 0; t < ms; t += 20) {
      stage.push({ kind: 'audio-in', pcm: Buffer.alloc((RATE / 50) * 2), sampleRate: RATE, atMs: audioMs });
      audioMs += 20;
      clock += 20;
      const level = typeof levelDb === 'function' ? levelDb() : levelDb;
      stage.push({ kind: 'vad-frame', endMs: audioMs, lastSpeechMs: audioMs, levelDb: level });
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
    /** The VAD hears speech begin now; `soundLeadMs`: the sound it continues from began that much earlier. */
    speechStart: (soundLeadMs = 0) =>
      stage.push({ kind: 'speech-start', atMs: audioMs, soundOnsetMs: audioMs - soundLeadMs }),
    speechEnd: () => stage.push({ kind: 'speech-end', atMs: audioMs, lastSpeechMs: audioMs - 300 }),
    heard: (text: string, final: boolean) =>
      stage.push({ kind: 'transcript', text, final, atMs: clock, endMs: audioMs }),
    interrupts: () => out.flatMap((f) => (f.kind === 'interrupt' ? [f.reason] : [])),
    holds: () => out.filter((f) => f.kind === 'hold-playback').length,
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
    expect(r.error!.issues[0]!.message).toBe(
      'turnTaking.interruption: name must be one of default, vad-only, line-contrast',
    );
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

  it('default: long speech with no words yet interrupts at bargeInForceMs (long_speech)', () => {
    const c = callerOverAgent();
    c.speak();
    c.speechStart();
    c.audio(860);
    expect(c.interrupts()).toEqual([]);
    c.audio(60);
    expect(c.holds()).toBe(0);
    expect(c.interrupts()).toEqual(['long_speech']);
    c.close();
  });

  it('default with resumeFalseStarts: long speech with no words yet stops the agent tentatively at bargeInForceMs', () => {
    const c = callerOverAgent({
      interruption: interruptionDetector(
        { bargeInMinMs: SETTINGS.bargeInMinMs, bargeInForceMs: SETTINGS.bargeInForceMs },
        { name: 'default', resumeFalseStarts: true },
      ),
    });
    c.speak();
    c.speechStart();
    c.audio(860);
    expect(c.holds()).toBe(0);
    c.audio(60);
    // Not a barge-in yet: the agent falls silent and its reply is held until words come (false-barge-in.test.ts).
    expect(c.holds()).toBe(1);
    expect(c.interrupts()).toEqual([]);
    c.heard('wait stop', false);
    expect(c.interrupts()).toEqual(['speech']);
    c.close();
  });

  for (const heard of ['op', 'Yeah, yeah, yeah, yeah.', 'Okay okay.', 'Mm-hm-hm.', 'yea', 'Uh-hum.', 'Mm-hmm. op']) {
    it(`default: "${heard}" over the agent (a hum heard as a short non-word, a repeated backchannel) does not interrupt`, () => {
      const c = callerOverAgent();
      c.speak();
      c.speechStart();
      c.audio(100);
      c.heard(heard, false);
      c.audio(300);
      c.heard(heard, true);
      c.audio(100);
      expect(c.interrupts()).toEqual([]);
      c.close();
    });
  }

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

  it('default: minMs runs from the sound\'s onset, so a soft "w…ait" the VAD took for speech late stops the agent at once', () => {
    // The sound rose over the line's floor 220 ms before the VAD scored it as speech; "Wait," came in meanwhile.
    const w = callerOverAgent();
    w.speak();
    w.audio(20);
    w.heard('Wait,', false);
    expect(w.interrupts()).toEqual([]); // no VAD speech yet: words alone (one word) do not stop the agent
    w.speechStart(220);
    w.audio(20);
    expect(w.interrupts()).toEqual(['speech']);
    w.close();

    // The same lead without words: nothing until the VAD's own forceMs (a hum or a noise does not gain the lead).
    const n = callerOverAgent();
    n.speak();
    n.speechStart(220);
    n.audio(860);
    expect(n.interrupts()).toEqual([]);
    n.audio(60);
    expect(n.interrupts()).toEqual(['long_speech']);
    n.close();

    // A backchannel with the same lead is still one.
    const b = callerOverAgent();
    b.speak();
    b.heard('Mm-hmm.', false);
    b.speechStart(220);
    b.audio(300);
    b.heard('Mm-hmm.', true);
    b.audio(100);
    expect(b.interrupts()).toEqual([]);
    b.close();
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

describe('interruption seam: line-contrast, background voices over the agent', () => {
  const contrast = () => interruptionDetector(PLATFORM, { name: 'line-contrast' });
  /** A crowd on the line: voices the VAD hears as speech, at -30 dBFS give or take 4 dB, seeded. */
  const crowd = () => {
    const rnd = mulberry32(31);
    return () => -30 + (rnd() * 2 - 1) * 4;
  };

  it('contract: names line-contrast with a margin of 3–30 dB', () => {
    expect(InterruptionChoice.parse({ name: 'line-contrast', marginDb: 6 })).toEqual({
      name: 'line-contrast',
      marginDb: 6,
    });
    expect(InterruptionChoice.safeParse({ name: 'line-contrast', marginDb: 1 }).success).toBe(false);
  });

  it('background voices for 3 s never interrupt (default stops for them at bargeInForceMs)', () => {
    for (const [interruption, expected] of [
      [undefined, ['long_speech']],
      [contrast(), []],
    ] as const) {
      const c = callerOverAgent({ interruption });
      c.speak();
      c.speechStart();
      c.audio(3000, crowd());
      expect(c.interrupts()).toEqual(expected);
      c.close();
    }
  });

  it("a crowd the VAD seldom hears as speech: its words, well under the caller's voice, do not interrupt; the caller's do", () => {
    for (const [interruption, stoppedForCrowd] of [
      [undefined, true],
      [contrast(), false],
    ] as const) {
      const c = callerOverAgent({ interruption });
      const rnd = mulberry32(7);
      const quietCrowd = () => -44 + (rnd() * 2 - 1) * 3;
      // The caller's own turn, at about -20 dBFS, before the agent answers.
      c.speechStart();
      c.audio(1200, () => -20 + (rnd() * 2 - 1) * 3);
      c.heard('My order has not arrived.', true);
      c.speechEnd();
      c.speak();
      // The crowd behind them: 2.5 s the VAD does not take for speech (the line does not "carry voices")…
      c.audio(2500, quietCrowd);
      // …then a stretch of it the VAD does, which the STT transcribes.
      c.speechStart();
      c.audio(100, quietCrowd);
      c.heard('the weather was lovely', false);
      c.audio(400, quietCrowd);
      c.speechEnd();
      expect(c.interrupts()).toEqual(stoppedForCrowd ? ['speech'] : []);
      if (stoppedForCrowd) {
        c.close();
        continue;
      }
      c.audio(400, quietCrowd);
      // The caller, at their own level, over it.
      c.speechStart();
      c.audio(100, () => -21);
      c.heard('wait stop', false);
      c.audio(300, () => -21);
      expect(c.interrupts()).toEqual(['speech']);
      c.close();
    }
  });

  it("background voices' words under the margin do not interrupt either", () => {
    const c = callerOverAgent({ interruption: contrast() });
    c.speak();
    const voices = crowd();
    c.speechStart();
    c.audio(600, voices);
    c.heard('and then the man said', false);
    c.audio(2000, voices);
    c.heard('and then the man said to her', true);
    expect(c.interrupts()).toEqual([]);
    c.close();
  });

  it('the caller over the voices, 12 dB louder, interrupts on their words', () => {
    const c = callerOverAgent({ interruption: contrast() });
    c.speak();
    c.speechStart();
    const voices = crowd();
    c.audio(2000, voices);
    expect(c.interrupts()).toEqual([]);
    c.audio(100, () => voices() + 12);
    c.heard('wait stop', false);
    c.audio(200, () => voices() + 12);
    expect(c.interrupts()).toEqual(['speech']);
    c.close();
  });

  it('a caller as quiet as the voices does not interrupt; speaking up does', () => {
    const c = callerOverAgent({ interruption: contrast() });
    c.speak();
    c.speechStart();
    const voices = crowd();
    c.audio(2000, voices);
    c.heard('wait stop', false);
    c.audio(400, voices);
    expect(c.interrupts()).toEqual([]);
    c.audio(300, () => voices() + 10);
    expect(c.interrupts()).toEqual(['speech']);
    c.close();
  });

  it('a caller with no words yet still stops the agent at forceMs on a quiet line (a lagging or batch STT)', () => {
    const c = callerOverAgent({
      interruption: interruptionDetector(PLATFORM, { name: 'line-contrast', speaking: { forceMs: 1500 } }),
    });
    c.speak();
    c.audio(1000, -80);
    c.speechStart();
    // Long enough for the caller's own speech to fill a quarter of the line's recent past: it is still the caller.
    c.audio(1400, -20);
    expect(c.interrupts()).toEqual([]);
    c.audio(200, -20);
    expect(c.interrupts()).toEqual(['long_speech']);
    c.close();
  });

  it('on a quiet line it is default\'s rule: "mm-hm" does not interrupt, "wait, stop" just after it at the same level does', () => {
    const c = callerOverAgent({ interruption: contrast() });
    c.speak();
    c.audio(1000, -80);
    c.speechStart();
    c.audio(200, -20);
    c.heard('mm-hm', false);
    c.audio(400, -20);
    c.heard('Mm-hm.', true);
    c.audio(300, -80);
    c.speechEnd();
    expect(c.interrupts()).toEqual([]);
    // The caller's own backchannel is not the line's background: "wait, stop" stands out from the line before it.
    c.audio(100, -80);
    c.speechStart();
    c.audio(100, -20);
    c.heard('wait stop', false);
    c.audio(120, -20);
    expect(c.interrupts()).toEqual(['speech']);
    c.close();
  });
});
