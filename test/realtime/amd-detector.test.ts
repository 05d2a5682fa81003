import { describe, expect, it } from 'vitest';
import { AnsweringMachineDetector, type AmdEvent } from '../../shared/domains/realtime/amd/detector.ts';
import { BeepTracker, dominantTone } from '../../shared/domains/realtime/amd/tone.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';

const RATE = 8000;
const tone = (hz: number, ms: number, amp = 8000) =>
  Int16Array.from({ length: (RATE * ms) / 1000 }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * hz * i) / RATE)));
const silence = (ms: number) => new Int16Array((RATE * ms) / 1000);
const samples = (pcm: Buffer) => new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length));
const concat = (...xs: Int16Array[]) => {
  const out = new Int16Array(xs.reduce((n, x) => n + x.length, 0));
  let o = 0;
  for (const x of xs) {
    out.set(x, o);
    o += x.length;
  }
  return out;
};

/** Feeds audio in 20 ms frames, as a call delivers it; returns every event. */
function detect(audio: Int16Array): AmdEvent[] {
  const d = new AnsweringMachineDetector(RATE);
  const out: AmdEvent[] = [];
  for (let i = 0; i + 160 <= audio.length; i += 160) out.push(...d.push(audio.subarray(i, i + 160)));
  return out;
}

describe('tone detection (Goertzel)', () => {
  it('finds a pure tone between filters, and speech is not one', async () => {
    const t = dominantTone(tone(1010, 20), RATE);
    expect(Math.abs(t.hz - 1010)).toBeLessThanOrEqual(15);
    expect(t.purity).toBeGreaterThan(0.75);
    const speech = samples(await fliteUtterance('Please leave your message for Anna'));
    let tonal = 0;
    for (let i = 0; i + 160 <= speech.length; i += 160)
      if (dominantTone(speech.subarray(i, i + 160), RATE).purity >= 0.6) tonal++;
    expect(tonal).toBeLessThan(5);
  });

  it('a beep is a run of tonal frames at one frequency; it reports its start and its end', () => {
    const b = new BeepTracker();
    const events: string[] = [];
    for (let f = 0; f < 20; f++) {
      const ev = b.push(
        f < 5 ? { hz: 0, purity: 0 } : f < 15 ? { hz: 1000, purity: 0.9 } : { hz: 0, purity: 0 },
        f >= 5 && f < 15,
        f * 20,
      );
      if (ev) events.push(`${ev.event}@${ev.startMs}`);
    }
    expect(events).toEqual(['beep@100', 'beep-end@100']);
  });
});

describe('AnsweringMachineDetector', () => {
  it('a short "Hello?" then a pause: human, decided one turn pause after the greeting', async () => {
    const hello = samples(await fliteUtterance('Hello?'));
    const events = detect(concat(silence(500), hello, silence(3000)));
    const d = events.find((e) => e.type === 'decision');
    expect(d).toMatchObject({ answeredBy: 'human', reason: 'short-greeting' });
    const greetingEnd = 500 + (hello.length / RATE) * 1000;
    // Audio time, not wall time: after a turn-taking pause (1000 ms) past the last loud frame of the greeting.
    expect(d!.atMs).toBeGreaterThan(500 + 1000);
    expect(d!.atMs).toBeLessThanOrEqual(greetingEnd + 1000);
    expect(events.some((e) => e.type === 'message-end')).toBe(false);
  });

  it('a long greeting and a beep: machine, then the greeting ends when the beep does', async () => {
    const greeting = samples(
      await fliteUtterance(
        'Hi, you have reached Dana. I cannot take your call right now. Please leave a message after the tone.',
      ),
    );
    const beepAt = 300 + (greeting.length / RATE) * 1000 + 400;
    const events = detect(concat(silence(300), greeting, silence(400), tone(850, 500), silence(3000)));
    const decision = events.find((e) => e.type === 'decision');
    expect(decision).toMatchObject({ answeredBy: 'machine', reason: 'long-greeting' });
    const beep = events.find((e) => e.type === 'beep')!;
    expect(Math.abs(beep.atMs - beepAt)).toBeLessThanOrEqual(40);
    const end = events.find((e) => e.type === 'message-end');
    expect(end).toMatchObject({ reason: 'beep', beepAtMs: beep.atMs });
    expect(end!.atMs).toBeGreaterThanOrEqual(beepAt + 500);
  });

  it('a long business greeting from a person, then a pause: human; a greeting that runs on: machine', async () => {
    // 2.5-3.5 s without a turn-taking pause: past Twilio's 2400 ms speech threshold, yet a person waiting for us.
    const business = samples(await fliteUtterance('Good afternoon, Smith residence, how can I help you?'));
    expect(business.length / RATE).toBeGreaterThan(2.4);
    const person = detect(concat(silence(400), business, silence(3000))).find((e) => e.type === 'decision');
    expect(person).toMatchObject({ answeredBy: 'human' });
    const tape = samples(
      await fliteUtterance(
        'Thank you for calling Bright Dental. Our office is currently closed. Please leave a message and we will return your call.',
      ),
    );
    const machine = detect(concat(silence(400), tape, silence(3000))).find((e) => e.type === 'decision');
    expect(machine).toMatchObject({ answeredBy: 'machine', reason: 'long-greeting' });
  });

  it('a short voicemail greeting and a late beep (0.75 s after it): machine, by the beep', async () => {
    const greeting = samples(await fliteUtterance('Leave a message.'));
    const events = detect(concat(silence(300), greeting, silence(750), tone(1000, 400), silence(3000)));
    expect(events.find((e) => e.type === 'decision')).toMatchObject({ answeredBy: 'machine', reason: 'beep' });
  });

  it('a long greeting without a beep ends after its silence; a silent line is unknown', async () => {
    const greeting = samples(
      await fliteUtterance('The person you are calling is not available. Please leave a message.'),
    );
    const events = detect(concat(greeting, silence(4000)));
    expect(events.find((e) => e.type === 'decision')).toMatchObject({ answeredBy: 'machine' });
    expect(events.find((e) => e.type === 'message-end')).toMatchObject({ reason: 'silence', beepAtMs: null });
    expect(detect(silence(6000)).find((e) => e.type === 'decision')).toMatchObject({
      answeredBy: 'unknown',
      reason: 'initial-silence',
      atMs: 5000,
    });
  });
});

describe('another decider says machine first (issue #35, item 7)', () => {
  it('a detector that took the greeting for a person still finds its end, the beep, and reports it', async () => {
    const d = new AnsweringMachineDetector(RATE);
    const feed = (audio: Int16Array) => {
      const out: AmdEvent[] = [];
      for (let i = 0; i + 160 <= audio.length; i += 160) out.push(...d.push(audio.subarray(i, i + 160)));
      return out;
    };
    // A short greeting and a pause: this detector says human and is finished…
    const first = feed(concat(silence(300), samples(await fliteUtterance('Hi, leave a message.')), silence(1500)));
    expect(first.find((e) => e.type === 'decision')).toMatchObject({ answeredBy: 'human' });
    expect(d.finished).toBe(true);
    // …but Twilio's AMD said machine: the beep that follows ends the greeting, and the end is reported.
    d.followMachine();
    expect(d.finished).toBe(false);
    const after = feed(concat(silence(400), tone(1000, 500), silence(600)));
    expect(after.find((e) => e.type === 'message-end')).toMatchObject({ reason: 'beep' });
    expect(d.finished).toBe(true);
  });
});
