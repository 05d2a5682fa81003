import { describe, expect, it } from 'vitest';
import { endOfUtteranceProsody, pitchOf, RecentAudio } from '../../shared/kernel/audio/prosody.ts';
import { pacedEar, PACED, type Hypothesis } from '../../shared/domains/agent-tests/simulators/paced-speech.ts';
import { jittered, seededRandom, withWordErrors } from '../../shared/domains/agent-tests/simulators/stt-realism.ts';
import {
  decideWindow,
  endpointingPolicy,
  type EndpointingPolicy,
  type TurnEvidence,
} from '../../workers/realtime/pipeline/turn/endpointing.ts';
import { TurnDetector } from '../../workers/realtime/pipeline/input/turn-detector.ts';
import { SttLag, TurnEvidenceTracker } from '../../workers/realtime/pipeline/turn/turn-evidence.ts';

const ENV = {
  REALTIME_ENDPOINTING_MS: 300,
  REALTIME_ENDPOINTING_ADAPTIVE: true,
  REALTIME_ENDPOINTING_COMPLETE_MS: 200,
  REALTIME_ENDPOINTING_INCOMPLETE_MS: 800,
  REALTIME_PREEMPTIVE_REPLIES: true,
  REALTIME_TURN_EAGERNESS: 'normal' as const,
};
const P: EndpointingPolicy = endpointingPolicy(ENV, { turn_taking: null });
const ev = (e: Partial<TurnEvidence>): TurnEvidence => ({
  text: '',
  final: true,
  uncoveredMs: 0,
  prosody: null,
  punctuated: true,
  ...e,
});

describe('turn decision with a lagging transcript', () => {
  it('reads words that cover the speech as before: closed → complete window, unfinished → the long one', () => {
    expect(decideWindow(P, ev({ text: 'My tooth has been hurting.' }))).toEqual({ windowMs: 200, reason: 'complete' });
    expect(decideWindow(P, ev({ text: 'I want to come in because' }))).toEqual({ windowMs: 800, reason: 'incomplete' });
    // An interim never gets the short window; a batch (unpunctuated) STT gives no hint by missing punctuation.
    expect(decideWindow(P, ev({ text: 'Is it open?', final: false })).windowMs).toBe(300);
    expect(decideWindow(P, ev({ text: 'I would like a cleaning', punctuated: false })).windowMs).toBe(300);
  });

  it('does not read a transcript that misses the end of the speech as complete: the voice decides until words catch up', () => {
    // "Do you have anything" while the caller's "on" is not transcribed yet: its words end 300 ms before the VAD's.
    const stale = decideWindow(P, ev({ text: 'Do you have anything.', uncoveredMs: 300, prosody: 0.3 }));
    expect(stale.reason).toBe('stale');
    expect(stale.windowMs).toBe(800);
    // The same stale words over a clearly finished-sounding end: the plain window, not the complete one.
    expect(decideWindow(P, ev({ text: 'Do you have anything.', uncoveredMs: 300, prosody: 0.9 })).windowMs).toBe(300);
    // A few tens of ms of difference is rounding, not missing words.
    expect(decideWindow(P, ev({ text: 'Is it open?', uncoveredMs: 60 })).reason).toBe('complete');
  });

  it("leans unfinished on a punctuating STT's open final, unless the voice sounds finished", () => {
    const level = decideWindow(P, ev({ text: 'I would like to come in this week phone', prosody: 0.3 }));
    expect(level).toEqual({ windowMs: 800, reason: 'unpunctuated' });
    const between = decideWindow(P, ev({ text: 'I would like a cleaning', prosody: 0.6 })).windowMs;
    expect(between).toBeGreaterThan(300);
    expect(between).toBeLessThan(800);
    expect(decideWindow(P, ev({ text: 'I would like a cleaning', prosody: 1 })).windowMs).toBe(300);
  });

  it('keeps a closed sentence over a voice that clearly goes on from the shortest window', () => {
    expect(decideWindow(P, ev({ text: 'Yes.', prosody: -0.8 })).windowMs).toBe(300);
  });

  it('scales with eagerness within the minimum and maximum windows; adaptive off is the fixed window', () => {
    const high = { ...P, eagerness: 'high' as const };
    const low = { ...P, eagerness: 'low' as const };
    const mixed = ev({ text: 'I would like a cleaning', prosody: 0.6 });
    const normal = decideWindow(P, mixed).windowMs;
    expect(decideWindow(high, mixed).windowMs).toBeLessThan(normal);
    expect(decideWindow(low, mixed).windowMs).toBeGreaterThan(normal);
    expect(decideWindow(low, ev({ text: 'and' })).windowMs).toBe(800); // never past the maximum
    expect(decideWindow(high, ev({ text: 'Done.' })).windowMs).toBe(200); // never under the minimum
    expect(decideWindow({ ...P, adaptive: false }, ev({ text: 'and' }))).toEqual({ windowMs: 300, reason: 'fixed' });
  });
});

describe("this call's STT lag", () => {
  it('starts from a prior, then expects the second-highest recent lag', () => {
    const l = new SttLag(300);
    expect(l.expectedMs()).toBe(300);
    l.observe(480);
    expect(l.expectedMs()).toBe(480);
    for (const x of [500, 520, 900, 510]) l.observe(x);
    expect(l.expectedMs()).toBe(520); // one 900 ms outlier is not the expectation
    l.observe(-5); // a final ahead of the audio clock is not a lag
    expect(l.samples).toBe(5);
  });

  it('tells how much of the speech the words do not cover, on the audio clock', () => {
    const t = new TurnEvidenceTracker(8000, true);
    expect(t.uncoveredMs(1000)).toBe(1000);
    t.onPartial(700);
    expect(t.uncoveredMs(1000)).toBe(300);
    t.onFinal(1010, 1510);
    expect(t.uncoveredMs(1000)).toBe(-10);
    expect(t.lag.expectedMs()).toBe(500);
    t.reset();
    expect(t.uncoveredMs(1000)).toBe(1000);
  });

  it('counts speech the STT has had for its lag and sent no words for as covered, and says when to decide again', () => {
    // A crowd behind the caller: the VAD hears speech 400 ms past the final's last word, and the STT (200 ms behind
    // the audio) sends no words for it.
    const t = new TurnEvidenceTracker(8000, true);
    const audioTo = (ms: number) => t.onAudio(Buffer.alloc(Math.round((ms * 8000) / 1000) * 2));
    audioTo(1200);
    t.onFinal(1000, 1200);
    audioTo(250);
    const heard = { text: 'For next Tuesday morning, please.', final: true };
    // At 1450 ms the STT has heard to 1250: the 150 ms after that may still be words on their way.
    expect(t.uncoveredMs(1400)).toBe(150);
    expect(t.heardPast(1400)).toBe(false);
    expect(t.decide(P, heard, 1400, true).reason).toBe('stale');
    expect(t.recheckAtMs(1400)).toBe(1600);
    // At 1650 ms it has heard past the crowd's 1400 and sent nothing: the words decide, and they are finished.
    audioTo(200);
    expect(t.uncoveredMs(1400)).toBe(-50);
    expect(t.heardPast(1400)).toBe(true);
    // A batch STT sends no words while the caller speaks: never known to have found none.
    const batch = new TurnEvidenceTracker(8000, false);
    batch.onAudio(Buffer.alloc(8000 * 2));
    expect(batch.heardPast(100)).toBe(false);
    expect(t.decide(P, heard, 1400, true)).toEqual({ windowMs: 200, reason: 'complete' });
    expect(t.recheckAtMs(1400)).toBeNull();
  });

  it('reads the voice only when the words leave the window to it', () => {
    /** The tracker, counting how often the end of the speech is actually read. */
    class Counting extends TurnEvidenceTracker {
      reads = 0;
      override prosody(lastSpeechMs: number): number {
        this.reads++;
        return super.prosody(lastSpeechMs);
      }
    }
    const t = new Counting(8000, true);
    t.onAudio(Buffer.from(voiced(flat(60, 160), flat(60, 4000)).buffer));
    t.onPartial(1200);
    // An interim, or words that end on "because": the words decide, nothing is read.
    expect(t.decide(P, { text: 'I would like a cleaning', final: false }, 1200, true).reason).toBe('unknown');
    expect(t.decide(P, { text: 'I want to come in because', final: true }, 1200, true).reason).toBe('incomplete');
    // The caller is still speaking: nothing to read either.
    expect(t.decide(P, { text: 'I would like a cleaning', final: true }, 1200, false).reason).toBe('unpunctuated');
    expect(t.reads).toBe(0);
    // An open final while the caller is quiet: the voice decides (read for this end, then from the tracker's cache).
    expect(t.decide(P, { text: 'I would like a cleaning', final: true }, 1200, true).reason).toBe('unpunctuated');
    expect(t.decide(P, { text: 'I would like a cleaning', final: true }, 1220, true).reason).toBe('unpunctuated');
    expect(t.reads).toBe(2);
    expect(t.decide(P, { text: 'My tooth hurts.', final: true }, 1220, true).reason).toBe('complete');
    expect(t.reads).toBe(3);
  });

  it('leaves a batch STT (no words until the utterance ends) to the fixed window, as before', () => {
    const t = new TurnEvidenceTracker(16000, false);
    expect(t.uncoveredMs(1000)).toBe(0);
    expect(t.decide(P, { text: '', final: true }, 1000, false)).toEqual({ windowMs: 300, reason: 'unknown' });
  });
});

describe('turn detector: a late final reopens an ended utterance', () => {
  function ended() {
    const d = new TurnDetector({ threshold: 0.5, startMs: 60, endpointMs: 300, pauseMs: 60 });
    let t = 0;
    for (; t < 400; t += 20) d.push(0.9, t, 20);
    let end = null;
    for (; !end; t += 20) end = d.push(0.1, t, 20)?.type === 'end' ? t : null;
    return { d, t };
  }

  it('goes on in silence until the longer window the final asks for, then ends once', () => {
    const { d, t } = ended(); // ended at 300 ms of silence after 400 ms
    expect(d.inSpeech).toBe(false);
    expect(d.reopen(0, 400, 800)).toBe(true);
    expect(d.inSpeech).toBe(true);
    let at = t;
    for (; at < 400 + 780; at += 20) expect(d.push(0.1, at, 20)).toBeNull();
    expect(d.push(0.1, at, 20)).toEqual({ type: 'end', onsetMs: 0, lastSpeechMs: 400, atMs: 1200 });
  });

  it('resumes when the caller speaks again, and refuses when the window has already passed in silence', () => {
    const { d, t } = ended();
    d.reopen(0, 400, 800);
    expect(d.push(0.9, t, 20)).toEqual({ type: 'resume', atMs: t });
    const late = ended();
    for (let at = late.t; at < 1400; at += 20) late.d.push(0.1, at, 20);
    expect(late.d.reopen(0, 400, 800)).toBe(false);
    expect(late.d.inSpeech).toBe(false);
  });
});

/** A voiced tone at 8 kHz whose pitch and level follow the given contours (per 20 ms frame). */
function voiced(f0: number[], level: number[]): Int16Array {
  const out = new Int16Array(f0.length * 160);
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    const k = Math.floor(i / 160);
    phase += (2 * Math.PI * f0[k]!) / 8000;
    // Two harmonics so autocorrelation finds the fundamental as speech's would.
    out[i] = Math.round(level[k]! * (Math.sin(phase) + 0.5 * Math.sin(2 * phase)));
  }
  return out;
}
const gap = (frames: number) => new Int16Array(frames * 160);
const concat = (...xs: Int16Array[]) => {
  const out = new Int16Array(xs.reduce((n, x) => n + x.length, 0));
  let o = 0;
  for (const x of xs) out.set(x, (o += x.length) - x.length);
  return out;
};
const flat = (n: number, v: number) => Array.from({ length: n }, () => v);

describe('end-of-utterance prosody', () => {
  it('hears a statement end (falling, drawn out, fading) as finished and a cut-off rise as going on', () => {
    const syllable = voiced(flat(8, 160), flat(8, 4000));
    const finished = concat(
      syllable,
      gap(4),
      syllable,
      gap(4),
      voiced(
        Array.from({ length: 20 }, (_, i) => 160 - i * 3),
        Array.from({ length: 20 }, (_, i) => 4000 * (1 - i / 24)),
      ),
    );
    const goesOn = concat(
      syllable,
      gap(4),
      syllable,
      gap(4),
      voiced(
        Array.from({ length: 5 }, (_, i) => 170 + i * 8),
        flat(5, 4000),
      ),
    );
    const a = endOfUtteranceProsody(finished, 8000);
    const b = endOfUtteranceProsody(goesOn, 8000);
    expect(a.finalPitchSt!).toBeLessThan(-1);
    expect(a.lengthening!).toBeGreaterThan(1.5);
    expect(a.score).toBeGreaterThan(0.5);
    expect(b.finalPitchSt!).toBeGreaterThan(1);
    expect(b.score).toBeLessThan(0);
  });

  it('says nothing (0) about silence or noise too short to tell', () => {
    expect(endOfUtteranceProsody(gap(50), 8000).score).toBe(0);
  });

  it('keeps the last audio in a ring on the stream clock', () => {
    const r = new RecentAudio(8000, 100); // 800 samples
    r.push(Int16Array.from({ length: 1200 }, (_, i) => i)); // 0–150 ms
    const s = r.slice(150, 50);
    expect(s.length).toBe(400);
    expect(s[0]).toBe(800);
    expect(s.at(-1)).toBe(1199);
    expect(r.slice(150, 500).length).toBe(800); // only what is kept
  });

  it('keeps the ring exact across wraps, for any chunk size (block copies, not sample by sample)', () => {
    const r = new RecentAudio(8000, 100); // 800 samples
    const all: number[] = [];
    let n = 0;
    for (const len of [160, 333, 7, 799, 800, 1, 2500, 160, 161, 0, 640]) {
      const chunk = Int16Array.from({ length: len }, () => (n++ * 7919) % 30000);
      r.push(chunk);
      all.push(...chunk);
      const endMs = (all.length / 8000) * 1000;
      for (const [back, span] of [
        [0, 100],
        [0, 30],
        [20, 50],
        [90, 100],
        [0, 1000],
      ] as const) {
        const end = Math.max(0, endMs - back);
        const endSample = Math.min(all.length, Math.round((end * 8000) / 1000));
        const start = Math.max(0, all.length - 800, endSample - Math.round((span * 8000) / 1000));
        expect(Array.from(r.slice(end, span))).toEqual(all.slice(start, Math.max(start, endSample)));
      }
    }
  });

  it('finds the same pitch as the plain autocorrelation (the running sums change the cost, not the estimate)', () => {
    // The straightforward search the fast one must match: every product summed per lag.
    const plain = (x: Int16Array, from: number, to: number, rate: number) => {
      const corr = (lag: number) => {
        let xy = 0;
        let xx = 0;
        let yy = 0;
        for (let i = from; i + lag < to; i++) {
          xy += x[i]! * x[i + lag]!;
          xx += x[i]! * x[i]!;
          yy += x[i + lag]! * x[i + lag]!;
        }
        return xx > 0 && yy > 0 ? xy / Math.sqrt(xx * yy) : 0;
      };
      const minLag = Math.floor(rate / 400);
      const maxLag = Math.min(Math.ceil(rate / 70), Math.floor((to - from) / 2));
      let best = 0;
      let bestLag = 0;
      for (let lag = minLag; lag <= maxLag; lag += 2) if (corr(lag) > best) [best, bestLag] = [corr(lag), lag];
      for (const lag of [bestLag - 1, bestLag + 1])
        if (lag >= minLag && lag <= maxLag && corr(lag) > best) [best, bestLag] = [corr(lag), lag];
      return best >= 0.5 && bestLag > 0 ? rate / bestLag : 0;
    };
    const rnd = seededRandom(11);
    const speech = concat(
      voiced(
        Array.from({ length: 30 }, (_, i) => 120 + i * 4),
        flat(30, 3000),
      ),
      Int16Array.from({ length: 1600 }, () => Math.round((rnd() - 0.5) * 4000)),
      voiced(
        Array.from({ length: 20 }, (_, i) => 220 - i * 3),
        flat(20, 5000),
      ),
    );
    for (const rate of [8000, 16000]) {
      const win = Math.round((rate * 32) / 1000);
      for (let at = 0; at + win <= speech.length; at += Math.round((rate * 20) / 1000)) {
        expect(pitchOf(speech, at, at + win, rate)).toBe(plain(speech, at, at + win, rate));
      }
    }
  });
});

describe('the STT double: lag, jitter and word errors', () => {
  it('makes the same errors for the same seed, at about the rate asked, keeping the closing punctuation', () => {
    const words = 'my tooth has been hurting since last week and it is getting worse.'.split(' ');
    const a = withWordErrors(words, 0.1, seededRandom(7));
    expect(withWordErrors(words, 0.1, seededRandom(7))).toEqual(a);
    expect(withWordErrors(words, 0, seededRandom(7))).toEqual(words);
    let errors = 0;
    const rnd = seededRandom(3);
    for (let i = 0; i < 400; i++) {
      const out = withWordErrors(words, 0.1, rnd);
      expect(out.at(-1)!.endsWith('.')).toBe(true);
      errors += out.filter((w, j) => w !== words[j]).length > 0 ? 1 : 0;
    }
    // P(at least one error in 13 words at 10 %) ≈ 75 %.
    expect(errors / 400).toBeGreaterThan(0.6);
    expect(errors / 400).toBeLessThan(0.9);
  });

  it('jitters within the bound and never below zero', () => {
    const rnd = seededRandom(1);
    for (let i = 0; i < 100; i++) {
      const v = jittered(300, 100, rnd);
      expect(v).toBeGreaterThanOrEqual(200);
      expect(v).toBeLessThanOrEqual(400);
    }
    expect(jittered(20, 100, seededRandom(2))).toBeGreaterThanOrEqual(0);
  });

  it('sends interims whose words end behind the audio, then one that caught up, then the final', () => {
    const out: { h: Hypothesis; final: boolean; atMs: number }[] = [];
    let now = 0;
    const ear = pacedEar(
      { ...PACED, finalAfterMs: 500, interimLagMs: 200 },
      () => 'my tooth has been hurting.',
      (h, final) => out.push({ h, final, atMs: now }),
    );
    const hear = (rms: number, ms: number) => {
      for (let t = 0; t < ms; t += 20) {
        now += 20;
        ear.hear(rms, 0.02);
      }
    };
    hear(1000, 1400); // 1.4 s of speech
    hear(0, 700);
    const interims = out.filter((o) => !o.final);
    const fin = out.filter((o) => o.final);
    expect(fin).toHaveLength(1);
    expect(fin[0]!.h.transcript).toBe('my tooth has been hurting.');
    expect(fin[0]!.atMs).toBe(1900);
    for (const i of interims.filter((o) => o.atMs <= 1400)) {
      // During speech every interim describes the audio of 200 ms before.
      expect(i.h.words.at(-1)!.end * 1000).toBeCloseTo(i.atMs - 200, 5);
    }
    const caught = interims.find((o) => o.atMs > 1400 && o.h.transcript === 'my tooth has been hurting.');
    expect(caught).toBeDefined();
    expect(caught!.atMs).toBeLessThan(1900);
    expect(caught!.h.words.at(-1)!.end * 1000).toBeCloseTo(1400, 5);
  });
});
