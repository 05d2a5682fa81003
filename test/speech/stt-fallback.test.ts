import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FallbackSttStream, type FallbackSttOptions } from '../../shared/engines/stt/fallback.ts';
import { ReconnectingSttStream } from '../../shared/engines/stt/reconnecting.ts';
import type { SttStreamEvent } from '../../shared/engines/stt/types.ts';
import { DeepgramStt } from '../../shared/engines/stt/vendors/deepgram.ts';
import { silence, tone } from '../../support/doubles/audio.ts';
import {
  startDeepgramLiveDouble,
  type DeepgramLiveDouble,
} from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import { frames } from './vendors/stream-helpers.ts';

/**
 * The engines' live STT wrappers over Deepgram doubles on port 0 that drop, refuse or go silent: the reconnecting
 * stream (one engine) and the fallback composite (an ordered list). Nothing here waits on the clock: every wait is
 * for a state (an event, a connection).
 */

const RATE = 8000;
const BPS = RATE * 2;
let primary: DeepgramLiveDouble;
let secondary: DeepgramLiveDouble;
let primaryStt: DeepgramStt;
let secondaryStt: DeepgramStt;

beforeAll(async () => {
  // The endpointing model: a final after 300 ms of silence in the audio, whatever the wall clock does.
  primary = await startDeepgramLiveDouble({ model: 'endpointing', script: ['Primary heard you.'] });
  secondary = await startDeepgramLiveDouble({ model: 'endpointing', script: ['Fallback heard you.'] });
  primaryStt = new DeepgramStt({ baseUrl: primary.url, endpointingMs: 300 });
  secondaryStt = new DeepgramStt({ baseUrl: secondary.url, endpointingMs: 300 });
});
afterAll(async () => {
  await primary?.close();
  await secondary?.close();
});
beforeEach(() => {
  primary.mute(false);
  secondary.mute(false);
});

type Final = Extract<SttStreamEvent, { type: 'final' }>;
type Heard = { ev: SttStreamEvent; engine: string };

async function until(cond: () => boolean): Promise<void> {
  await expect.poll(cond, { timeout: 20_000, interval: 5 }).toBe(true);
}

function write(s: { write(pcm: Buffer): void }, audio: Buffer): void {
  for (const f of frames(audio, 320)) s.write(f);
}

const open = (stt: DeepgramStt, d: DeepgramLiveDouble) => () =>
  stt.stream({ sampleRate: RATE, language: 'en', apiKey: d.key });

function fallback(opts: FallbackSttOptions = {}) {
  const heard: Heard[] = [];
  const switches: Array<[string, string]> = [];
  const failures: unknown[] = [];
  const s = new FallbackSttStream(
    [
      { name: 'vendor', open: open(primaryStt, primary) },
      { name: 'local', open: open(secondaryStt, secondary) },
    ],
    BPS,
    {
      onEvent: (ev, engine) => heard.push({ ev, engine }),
      onFail: (e) => failures.push(e),
      onSwitch: (from, to) => switches.push([from, to]),
    },
    opts,
  );
  const finals = () => heard.filter((h) => h.ev.type === 'final') as Array<{ ev: Final; engine: string }>;
  return { s, heard, finals, switches, failures };
}

describe('ReconnectingSttStream (any live STT consumer)', () => {
  it('a socket dropped mid-utterance is reopened with the unfinalized audio; the final is whole, on the caller timeline, the resent audio counted', async () => {
    const events: SttStreamEvent[] = [];
    const reconnects: number[] = [];
    const before = primary.connections.length;
    const s = new ReconnectingSttStream(open(primaryStt, primary), BPS, {
      onEvent: (ev) => events.push(ev),
      onFail: (e) => {
        throw e;
      },
      onReconnect: (attempt) => reconnects.push(attempt),
    });
    s.start();
    await until(() => primary.connections.length === before + 1);
    write(s, silence(RATE, 1));
    write(s, tone(RATE, 0.4));
    await until(() => events.some((e) => e.type === 'partial'));
    primary.dropAll(1011, 'test: dropped');
    await until(() => reconnects.length === 1 && primary.connections.length === before + 2);
    write(s, tone(RATE, 0.4));
    write(s, silence(RATE, 0.6));
    await until(() => events.some((e) => e.type === 'final'));
    s.end();
    s.close();

    const finals = events.filter((e): e is Final => e.type === 'final');
    expect(finals.map((f) => f.text)).toEqual(['Primary heard you.']);
    // The new socket heard the utterance from its start (the unfinalized audio since 0 s, in one write): its final
    // ends where the caller stopped, on the caller's timeline.
    expect(finals[0]!.start).toBeLessThan(1.1);
    expect(finals[0]!.end).toBeCloseTo(1.8, 1);
    expect(s.reconnects).toBe(1);
    // Everything not finalized when the socket dropped (1.4 s: the silence and the first tone) was sent again.
    expect(s.resentSeconds).toBeGreaterThanOrEqual(1.4 - 0.001);
    expect(primary.connections[before + 1]!.audioBytes).toBeGreaterThanOrEqual(Math.floor(2.4 * BPS) - 2);
  });

  it('a permanent refusal (bad key) is not retried', async () => {
    const failures: unknown[] = [];
    const s = new ReconnectingSttStream(
      () => primaryStt.stream({ sampleRate: RATE, language: 'en', apiKey: 'wrong' }),
      BPS,
      {
        onEvent: () => {},
        onFail: (e) => failures.push(e),
      },
    );
    s.start();
    write(s, tone(RATE, 0.2));
    await until(() => failures.length === 1);
    expect(s.reconnects).toBe(0);
    expect(failures[0]).toMatchObject({ retryable: false, status: 401 });
    s.close();
  });
});

describe('FallbackSttStream (an ordered list of live STTs)', () => {
  it('falls back mid-utterance when the first engine fails for good: the next hears the whole utterance; billed by engine', async () => {
    const f = fallback({ recoverySeconds: 1000 });
    const pBefore = primary.connections.length;
    const sBefore = secondary.connections.length;
    f.s.start();
    await until(() => primary.connections.length === pBefore + 1);
    write(f.s, silence(RATE, 0.5));
    write(f.s, tone(RATE, 0.4));
    await until(() => f.heard.some((h) => h.ev.type === 'partial'));
    expect(f.heard.every((h) => h.engine === 'vendor')).toBe(true);
    // The vendor goes down: the socket drops and the reconnection is refused.
    primary.failNextHandshake(503);
    primary.dropAll(1011, 'test: vendor down');
    await until(() => f.switches.length === 1);
    write(f.s, tone(RATE, 0.4));
    write(f.s, silence(RATE, 0.6));
    await until(() => f.finals().length === 1);
    f.s.end();
    f.s.close();

    expect(f.switches).toEqual([['vendor', 'local']]);
    expect(f.failures).toEqual([]);
    expect(f.finals().map((h) => [h.engine, h.ev.text])).toEqual([['local', 'Fallback heard you.']]);
    // The fallback heard the utterance from its start (replayed), on the caller's timeline.
    const final = f.finals()[0]!.ev;
    expect(final.start).toBeLessThan(0.6);
    expect(final.end).toBeCloseTo(1.3, 1);
    expect(secondary.connections.length).toBe(sBefore + 1);
    expect(secondary.connections[sBefore]!.audioBytes).toBeGreaterThanOrEqual(Math.floor(1.9 * BPS) - 2);
    // The bill follows the engine: the vendor was sent 0.9 s, and the replay to its reconnection (counted when
    // sent, refused or not), the local engine the replay and the rest.
    expect(f.s.secondsBy.vendor).toBeCloseTo(1.8, 2);
    expect(f.s.secondsBy.local).toBeCloseTo(1.9, 2);
  });

  it('tries the first engine again after the recovery interval, at the end of an utterance', async () => {
    const f = fallback({ recoverySeconds: 1 });
    const pBefore = primary.connections.length;
    primary.failNextHandshake(401);
    f.s.start();
    await until(() => f.switches.length === 1);
    // On the fallback: one utterance, long enough for the recovery interval.
    write(f.s, silence(RATE, 0.5));
    write(f.s, tone(RATE, 0.5));
    write(f.s, silence(RATE, 0.6));
    await until(() => f.finals().length === 1 && f.switches.length === 2);
    // Back on the vendor, which hears the next utterance.
    await until(() => primary.connections.length === pBefore + 1);
    write(f.s, tone(RATE, 0.5));
    write(f.s, silence(RATE, 0.6));
    await until(() => f.finals().length === 2);
    f.s.end();
    f.s.close();

    expect(f.switches).toEqual([
      ['vendor', 'local'],
      ['local', 'vendor'],
    ]);
    expect(f.finals().map((h) => [h.engine, h.ev.text])).toEqual([
      ['local', 'Fallback heard you.'],
      ['vendor', 'Primary heard you.'],
    ]);
    // The vendor's final is on the caller's timeline (after the first utterance), not its socket's.
    expect(f.finals()[1]!.ev.start).toBeGreaterThan(f.finals()[0]!.ev.end);
    expect(f.s.secondsBy.vendor).toBeGreaterThan(0);
    expect(f.s.secondsBy.local).toBeGreaterThanOrEqual(1.6 - 0.001);
  });

  it('a stalled engine (audio taken, nothing said) is left for the next after the speech deadline', async () => {
    const f = fallback({ stallSeconds: 1, recoverySeconds: 1000 });
    const pBefore = primary.connections.length;
    f.s.start();
    await until(() => primary.connections.length === pBefore + 1);
    primary.mute(true);
    write(f.s, silence(RATE, 0.5));
    write(f.s, tone(RATE, 1.2));
    await until(() => f.switches.length === 1);
    write(f.s, silence(RATE, 0.6));
    await until(() => f.finals().length === 1);
    f.s.close();
    expect(f.finals().map((h) => [h.engine, h.ev.text])).toEqual([['local', 'Fallback heard you.']]);
    expect(primary.connections[pBefore]!.sent).toEqual([]);
  });

  it('with no other engine left, the one in use is reconnected when its socket drops (not given up on)', async () => {
    const f = fallback({ recoverySeconds: 1000 });
    const sBefore = secondary.connections.length;
    primary.failNextHandshake(401);
    f.s.start();
    await until(() => secondary.connections.length === sBefore + 1);
    write(f.s, silence(RATE, 0.5));
    write(f.s, tone(RATE, 0.4));
    await until(() => f.heard.some((h) => h.ev.type === 'partial'));
    secondary.dropAll(1011, 'test: local worker died');
    await until(() => secondary.connections.length === sBefore + 2);
    write(f.s, silence(RATE, 0.6));
    await until(() => f.finals().length === 1);
    f.s.close();
    expect(f.failures).toEqual([]);
    expect(f.switches).toEqual([['vendor', 'local']]);
    expect(f.finals().map((h) => [h.engine, h.ev.text])).toEqual([['local', 'Fallback heard you.']]);
  });

  it('when every engine has failed the stream fails', async () => {
    const f = fallback();
    primary.failNextHandshake(401);
    secondary.failNextHandshake(401);
    f.s.start();
    write(f.s, tone(RATE, 0.2));
    await until(() => f.failures.length === 1);
    expect(f.switches).toEqual([['vendor', 'local']]);
    f.s.close();
  });
});

describe('an engine that refuses a stream before any socket', () => {
  it('alone: start throws, as the engine does; in a fallback list: the next engine hears the audio', async () => {
    const refuse = () => primaryStt.stream({ sampleRate: RATE, language: 'en' }); // no key: thrown at once
    const alone = new ReconnectingSttStream(refuse, BPS, { onEvent: () => {}, onFail: () => {} });
    expect(() => alone.start()).toThrow(/key/);
    const heard: Array<[string, string]> = [];
    const s = new FallbackSttStream(
      [
        { name: 'vendor', open: refuse },
        { name: 'local', open: open(secondaryStt, secondary) },
      ],
      BPS,
      { onEvent: (ev, engine) => ev.type === 'final' && heard.push([engine, ev.text]), onFail: () => {} },
      { recoverySeconds: 1000 },
    );
    const before = secondary.connections.length;
    s.start();
    write(s, tone(RATE, 0.4));
    await until(() => secondary.connections.length === before + 1);
    write(s, silence(RATE, 0.6));
    await until(() => heard.length === 1);
    s.close();
    expect(heard).toEqual([['local', 'Fallback heard you.']]);
  });
});
