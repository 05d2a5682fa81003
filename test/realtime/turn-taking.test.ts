import { describe, expect, it } from 'vitest';
import { TurnTaking } from '../../shared/contracts/agents.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import type { AssistantTurn } from '../../workers/realtime/pipeline/assistant-turn.ts';
import {
  completeness,
  endpointingPolicy,
  endpointWindowMs,
  sameWords,
} from '../../workers/realtime/pipeline/turn/endpointing.ts';
import { PreparedReplies } from '../../workers/realtime/pipeline/answer/prepared-reply.ts';
import { TurnDetector } from '../../workers/realtime/pipeline/input/turn-detector.ts';

const ENV = {
  REALTIME_ENDPOINTING_MS: 300,
  REALTIME_ENDPOINTING_ADAPTIVE: true,
  REALTIME_ENDPOINTING_COMPLETE_MS: 200,
  REALTIME_ENDPOINTING_INCOMPLETE_MS: 800,
  REALTIME_PREEMPTIVE_REPLIES: true,
  REALTIME_TURN_EAGERNESS: 'normal' as const,
};

describe('adaptive endpointing decisions', () => {
  it('reads final punctuation and questions as complete', () => {
    for (const t of ['Do you have anything on Tuesday morning?', 'I would like to book a cleaning.', 'Thanks!'])
      expect(completeness(t)).toBe('complete');
    // An unpunctuated question shape reads the same halfway through: no hint.
    expect(completeness('do you have anything on Tuesday')).toBe('unknown');
  });

  it('reads a trailing conjunction, preposition, hesitation or a number being read out as unfinished', () => {
    for (const t of [
      'I want to come in on Tuesday and',
      'I called because',
      'so',
      'Do you have anything on',
      'My number is 555',
      'my card number is four five one',
      'I need, um',
      'the appointment for my daughter,',
    ])
      expect(completeness(t), t).toBe('incomplete');
    // A number the STT closed as a sentence is complete; a run of digit groups is still being read.
    expect(completeness('I need two.')).toBe('complete');
    expect(completeness('It is 555 0134.')).toBe('incomplete');
  });

  it('gives no hint for unpunctuated statements', () => {
    expect(completeness('I would like to book a cleaning')).toBe('unknown');
    expect(completeness('')).toBe('unknown');
  });

  it('picks the window from the policy; off, the fixed window always', () => {
    const p = endpointingPolicy(ENV, { turn_taking: null });
    expect(p).toEqual({
      fixedMs: 300,
      adaptive: true,
      completeMs: 200,
      incompleteMs: 800,
      preemptive: true,
      eagerness: 'normal',
    });
    expect(endpointWindowMs(p, 'Is it open?')).toBe(200);
    expect(endpointWindowMs(p, 'I want to come in because')).toBe(800);
    expect(endpointWindowMs(p, 'I would like a cleaning')).toBe(300);
    // An interim transcript never shortens the window (the caller may be speaking again already).
    expect(endpointWindowMs(p, 'Is it open?', false)).toBe(300);
    expect(endpointWindowMs(p, 'I want to come in because', false)).toBe(800);
    const off = endpointingPolicy(ENV, { turn_taking: { adaptive: false, endpointingMs: 450 } });
    expect(endpointWindowMs(off, 'Is it open?')).toBe(450);
    expect(endpointWindowMs(off, 'and')).toBe(450);
    // The agent's fields override the env defaults one by one.
    expect(endpointingPolicy(ENV, { turn_taking: { completeMs: 150, preemptive: false } })).toEqual({
      fixedMs: 300,
      adaptive: true,
      completeMs: 150,
      incompleteMs: 800,
      preemptive: false,
      eagerness: 'normal',
    });
  });

  it('compares transcripts by words', () => {
    expect(sameWords('Is it open?', 'is it open')).toBe(true);
    expect(sameWords('Is it open', 'Is it open today?')).toBe(false);
  });
});

describe('per-agent turnTaking validation', () => {
  it('accepts the fields in range and in order', () => {
    expect(TurnTaking.safeParse({}).success).toBe(true);
    expect(
      TurnTaking.safeParse({
        endpointingMs: 300,
        completeMs: 150,
        incompleteMs: 900,
        adaptive: true,
        preemptive: false,
      }).success,
    ).toBe(true);
  });

  it('refuses unknown fields, out-of-range values and windows out of order', () => {
    const bad = [
      { endpointMs: 300 },
      { endpointingMs: 50 },
      { incompleteMs: 9000 },
      { completeMs: 12.5 },
      { adaptive: 'yes' },
      { endpointingMs: 300, completeMs: 400 },
      { endpointingMs: 500, incompleteMs: 400 },
      { completeMs: 900, incompleteMs: 800 },
    ];
    for (const b of bad) expect(TurnTaking.safeParse(b).success, JSON.stringify(b)).toBe(false);
  });
});

describe('turn detector: pause and adaptive window', () => {
  it('reports one pause per silence before the endpoint, and ends at the window set while silent', () => {
    const d = new TurnDetector({ threshold: 0.5, startMs: 60, endpointMs: 300, pauseMs: 60 });
    const events: unknown[] = [];
    let t = 0;
    const feed = (prob: number, n: number) => {
      for (let i = 0; i < n; i++, t += 20) {
        const e = d.push(prob, t, 20);
        if (e) events.push(e);
      }
    };
    feed(0.9, 20); // speech 0–400 ms
    feed(0.1, 5); // 100 ms quiet: one pause at 60 ms of silence
    feed(0.9, 10); // the caller goes on, 500–700 ms
    feed(0.1, 5); // a second pause
    d.setEndpointMs(800); // "…because": a longer window
    feed(0.1, 20); // 500 ms of silence in all: not the end at 800
    expect(d.inSpeech).toBe(true);
    d.setEndpointMs(200); // the final came in, punctuated
    expect(d.silentUntil(t)).toEqual({ type: 'end', onsetMs: 0, lastSpeechMs: 700, atMs: t });
    expect(events).toEqual([
      { type: 'start', onsetMs: 0, atMs: 60 },
      { type: 'pause', lastSpeechMs: 400, atMs: 460 },
      { type: 'resume', atMs: 500 },
      { type: 'pause', lastSpeechMs: 700, atMs: 760 },
    ]);
  });

  it('reports the pause at the threshold set from what was said', () => {
    const d = new TurnDetector({ threshold: 0.5, startMs: 60, endpointMs: 800, pauseMs: 60 });
    for (let t = 0; t < 320; t += 32) d.push(0.9, t, 32); // speech until 320 ms
    d.setPauseMs(30); // "…hurting.": a finished sentence, prepare after one frame of silence
    expect(d.push(0.1, 320, 32)).toEqual({ type: 'pause', lastSpeechMs: 320, atMs: 352 });
  });

  it('takes speech the STT heard (its word timings) as speech: the silence restarts there, a pause resumes', () => {
    const d = new TurnDetector({ threshold: 0.5, startMs: 60, endpointMs: 800, pauseMs: 60 });
    for (let t = 0; t < 200; t += 20) d.push(0.9, t, 20); // speech until 200 ms
    for (let t = 200; t < 300; t += 20) d.push(0.1, t, 20); // the pause is reported at 260 ms
    expect(d.heardSpeechUntil(150)).toBeNull(); // older than the VAD's own last speech: nothing
    // A soft onset the model scored as silence: the STT's new word ends at 900 ms. No end at 1000 ms.
    expect(d.heardSpeechUntil(900)).toEqual({ type: 'resume', atMs: 900 });
    for (let t = 300; t < 1680; t += 20) expect(d.push(0.1, t, 20)?.type).not.toBe('end');
    expect(d.push(0.1, 1680, 20)).toEqual({ type: 'end', onsetMs: 0, lastSpeechMs: 900, atMs: 1700 });
    expect(d.heardSpeechUntil(2000)).toBeNull(); // outside speech: nothing to extend
  });
});

describe('preemptive replies', () => {
  function session() {
    let current: AssistantTurn | null = null;
    let idle = true;
    const pushed: Frame[] = [];
    const output: Frame[] = [];
    let n = 0;
    const r = new PreparedReplies({
      now: () => 0,
      current: () => current,
      setCurrent: (t) => (current = t),
      idle: () => idle,
      newTurnId: () => `t${++n}`,
      push: (f) => pushed.push(f),
      output: (f) => output.push(f),
    });
    const audio = (turnId: string, text: string, last: boolean): Frame => ({
      kind: 'tts-audio',
      turnId,
      sentence: 0,
      text,
      pcm: Buffer.alloc(320),
      sampleRate: 8000,
      last,
    });
    return {
      r,
      pushed,
      output,
      audio,
      current: () => current,
      busy: () => (idle = false),
    };
  }

  it('keeps the prepared reply when the confirmed turn says the same words, and plays its held frames in order', () => {
    const s = session();
    s.r.prepare('Is it open on Tuesday?');
    s.r.prepare('is it open on tuesday'); // the final, punctuated differently: the same reply
    expect(s.pushed).toEqual([
      { kind: 'user-turn', text: 'Is it open on Tuesday?', lastSpeechMs: 0, sttMs: 0, turnId: 't1' },
    ]);
    const t = s.current()!;
    t.held!.push(s.audio('t1', 'Yes, it is.', false), s.audio('t1', 'Yes, it is.', true));
    expect(s.output).toEqual([]); // nothing is heard before the turn is confirmed
    expect(s.r.confirm('Is it open on Tuesday?', { idx: 3, lastSpeechAt: 1000, endpointAt: 1200 })).toBe(true);
    expect(s.output.map((f) => f.kind === 'tts-audio' && f.last)).toEqual([false, true]);
    expect(t).toMatchObject({ idx: 3, lastSpeechAt: 1000, endpointAt: 1200, held: null, closed: false });
    expect(s.r.stats).toEqual({
      confirmed: 1,
      dropped: 0,
      llmChars: 0,
      ttsChars: 0,
      droppedBy: { wentOn: 0, wordsChanged: 0, finalDiffers: 0 },
    });
  });

  it('cancels the prepared reply when the caller goes on or the final differs: nothing of it plays', () => {
    const s = session();
    s.r.prepare('I would like to book a cleaning');
    const first = s.current()!;
    first.llmChars = 40;
    first.held!.push(s.audio('t1', 'Sure, when?', true));
    s.r.drop(); // the caller spoke again
    expect(first.closed).toBe(true);
    expect(s.current()).toBeNull();
    expect(s.pushed.at(-1)).toMatchObject({ kind: 'interrupt', reason: 'prepared_reply_dropped' });
    s.r.prepare('I would like to book a cleaning appointment');
    expect(s.pushed.at(-1)).toMatchObject({ kind: 'user-turn', turnId: 't2' });
    // The final transcript says something else: the prepared reply is dropped, the session starts over.
    expect(s.r.confirm('I would like to book a cleaning appointment for Tuesday.', {})).toBe(false);
    expect(s.output).toEqual([]);
    expect(s.r.stats).toEqual({
      confirmed: 0,
      dropped: 2,
      llmChars: 40,
      ttsChars: 'Sure, when?'.length,
      droppedBy: { wentOn: 1, wordsChanged: 0, finalDiffers: 1 },
    });
    // Newer words before the endpoint replace a prepared reply: counted apart.
    s.r.prepare('Is it open');
    s.r.prepare('Is it open on Sunday?');
    expect(s.r.stats.droppedBy).toEqual({ wentOn: 1, wordsChanged: 1, finalDiffers: 1 });
  });

  it('prepares nothing while the agent is busy', () => {
    const s = session();
    s.busy();
    s.r.prepare('Is it open?');
    expect(s.pushed).toEqual([]);
    expect(s.r.confirm('Is it open?', {})).toBe(false);
  });
});
