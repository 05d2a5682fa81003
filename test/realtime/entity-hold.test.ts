import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { SileroVad } from '../../shared/engines/vad/silero.ts';
import { Conversation } from '../../workers/realtime/pipeline/conversation.ts';
import type { Frame, SpokenTurn } from '../../workers/realtime/pipeline/frames.ts';
import { Pipeline } from '../../workers/realtime/pipeline/stage.ts';
import { entityShape } from '../../workers/realtime/pipeline/turn/entity-shape.ts';
import { PREPARE_AFTER_MS } from '../../workers/realtime/pipeline/turn/evidence-turn-detector.ts';
import { turnDetector } from '../../workers/realtime/pipeline/turn/turn-detector-registry.ts';
import { TurnStage } from '../../workers/realtime/pipeline/turn/turn-stage.ts';
import { VadStage } from '../../workers/realtime/pipeline/input/vad-stage.ts';
import { Playback } from '../../workers/realtime/pipeline/playback.ts';
import type { TurnDetectorChoice } from '../../shared/contracts/turn-seams.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import { callerAudio, platformTurnSettings } from '../../support/realtime/caller-audio.ts';
import { trimSilence } from '../../shared/kernel/audio/trim-silence.ts';

const RATE = 8000;
// Long final wait: an utterance is handed on when its final is in, never because this wait ran out.
const SETTINGS = platformTurnSettings({ finalWaitMs: 20_000 });

/**
 * The caller half of the voice pipeline on the real Silero VAD and flite speech (VAD → turn stage, the agent's turn
 * detector): the caller reads `groups` with `pauseMs` of silence between them, and each group's final transcript
 * (punctuated, as a streaming STT closes each segment) comes once the VAD has heard the group. Returns the
 * utterances the turn stage hands on.
 */
async function readOut(choice: TurnDetectorChoice, groups: string[], pauseMs: number): Promise<SpokenTurn[]> {
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const playback = new Playback({ outRate: RATE, sendAudio: () => {}, sendMark: () => {}, sendClear: () => {} }, now);
  const conv = new Conversation(now, playback, 'dev_test');
  const detector = turnDetector({ policy: SETTINGS.endpointing, inRate: RATE, streaming: true }, choice);
  const seen: Frame[] = [];
  const errors: unknown[] = [];
  const turns = new TurnStage(conv, { settings: SETTINGS, inRate: RATE, streaming: true, detector });
  const vad = new VadStage(new SileroVad(), RATE, {
    threshold: 0.5,
    startMs: 60,
    endpointMs: 300,
    pauseMs: PREPARE_AFTER_MS,
  });
  const p = new Pipeline(
    [vad, turns],
    (f) => seen.push(f),
    (_s, e) => errors.push(e),
  );
  let scoredMs = 0;
  const tap = (f: Frame) => {
    if (f.kind === 'vad-frame') scoredMs = Math.max(scoredMs, f.endMs);
  };
  turns.push = ((orig) => (f: Frame) => {
    tap(f);
    orig.call(turns, f);
  })(turns.push.bind(turns));
  const { clock, audio, silence } = callerAudio((f) => p.push(f), RATE);
  const until = async (pred: () => boolean, what: string) => {
    const deadline = Date.now() + 30_000;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`${what}: not seen`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const utterances = () => seen.flatMap((f) => (f.kind === 'utterance' ? [f] : []));
  p.push({ kind: 'start' });
  silence(300);
  for (const [k, text] of groups.entries()) {
    if (k > 0) silence(pauseMs);
    audio(trimSilence(await fliteUtterance(text.replace(/[.,]/g, ''), RATE)));
    const endMs = clock.atMs;
    await until(() => scoredMs >= endMs - 40, `group ${k} scored`);
    p.push({ kind: 'transcript', text, final: true, atMs: now(), endMs });
  }
  silence(2500);
  await until(() => scoredMs >= clock.atMs - 40, 'all audio scored');
  await until(() => utterances().length > 0, 'an utterance');
  p.push({ kind: 'end', reason: 'agent-ended' });
  expect(errors).toEqual([]);
  return utterances();
}

const ENTITY = { name: 'entity-hold' } as const;
const DEFAULT = { name: 'default' } as const;

describe('entity-hold: what the caller is reading, from the words', () => {
  it('reads numbers, addresses, spelled names and dates as being read until they are whole', () => {
    const cases: Array<[string, string]> = [
      ['My number is four one five.', 'reading'],
      ['My number is four one five. Five five five.', 'reading'],
      ['My number is four one five. Five five five. Zero one three four.', 'complete'],
      ['It is john dot smith', 'reading'],
      ['It is john.smith@example', 'reading'],
      ['My email is john dot smith at example dot com.', 'complete'],
      ['My surname is Kowalski, K O W.', 'reading'],
      ['My surname is Kowalski, K O W. A L S. K I.', 'complete'],
      ['I was born on March', 'reading'],
      ['I was born on March fifth.', 'complete'],
      ['My order number is 4 5 1 9.', 'reading'],
      ['card number 4111 1111 1111 1111', 'complete'],
      ['Let me see.', 'hesitating'],
      ['My number is four one five, um', 'hesitating'],
      // Not entities: an amount, a time, a month word that is a verb, a sentence.
      ['A table for four.', 'none'],
      ['I will be there at five.', 'none'],
      ['May I ask something?', 'none'],
      ['I would like a cleaning on Tuesday.', 'none'],
    ];
    for (const [text, state] of cases) expect(entityShape(text).state, text).toBe(state);
  });

  it('is a named detector: the contract lists it with its options, the default is unchanged', () => {
    const d = turnDetector({ policy: SETTINGS.endpointing, inRate: RATE, streaming: true }, ENTITY);
    expect(d.name).toBe('entity-hold');
    expect(d.prepareVerdict('My number is four one five.', 0)).toBe('unprepare');
    const plain = turnDetector({ policy: SETTINGS.endpointing, inRate: RATE, streaming: true });
    expect(plain.name).toBe('default');
  });
});

describe('entity-hold on the real VAD and flite speech', () => {
  const PHONE = ['My number is four one five.', 'Five five five.', 'Zero one three four.'];

  it('a phone number read in three groups with 1.2 s pauses: default cuts in, entity-hold takes one turn', async () => {
    const cut = await readOut(DEFAULT, PHONE, 1200);
    expect(cut[0]!.text).toBe('My number is four one five.');

    const [whole, ...rest] = await readOut(ENTITY, PHONE, 1200);
    expect(rest).toEqual([]);
    expect(whole!.text).toBe(PHONE.join(' '));
    // Complete (ten digits): the turn ends on the short window after the last group, not the hold.
    expect(whole!.endpointWaitMs).toBeLessThan(600);
  }, 90_000);

  it('an e-mail address and a spelled surname with 1.5 s pauses are one turn each', async () => {
    const email = ['My email is john dot smith', 'at example', 'dot com.'];
    const [e, ...e2] = await readOut(ENTITY, email, 1500);
    expect(e2).toEqual([]);
    expect(e!.text).toBe(email.join(' '));
    expect(e!.endpointWaitMs).toBeLessThan(600);

    const name = ['My surname is Kowalski, K O W.', 'A L S.', 'K I.'];
    const [n, ...n2] = await readOut(ENTITY, name, 1500);
    expect(n2).toEqual([]);
    expect(n!.text).toBe(name.join(' '));
  }, 120_000);

  it('a hesitation holds the turn longer: "let me see", 2 s, then the number', async () => {
    const said = ['Let me see.', 'It is four one five.'];
    const cut = await readOut(DEFAULT, said, 2000);
    expect(cut[0]!.text).toBe('Let me see.');
    const [whole, ...rest] = await readOut(ENTITY, said, 2000);
    expect(rest).toEqual([]);
    expect(whole!.text).toBe(said.join(' '));
  }, 90_000);
});
