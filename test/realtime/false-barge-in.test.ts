import { interruptionDetector } from '../../workers/realtime/pipeline/turn/interruption-registry.ts';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { SileroVad } from '../../shared/engines/vad/silero.ts';
import { trimSilence } from '../../shared/kernel/audio/trim-silence.ts';
import { Conversation } from '../../workers/realtime/pipeline/conversation.ts';
import type { Frame, TurnRecord } from '../../workers/realtime/pipeline/frames.ts';
import { PlaybackStage } from '../../workers/realtime/pipeline/output/playback-stage.ts';
import { Playback } from '../../workers/realtime/pipeline/playback.ts';
import { Pipeline } from '../../workers/realtime/pipeline/stage.ts';
import { PREPARE_AFTER_MS } from '../../workers/realtime/pipeline/turn/evidence-turn-detector.ts';
import { TurnStage } from '../../workers/realtime/pipeline/turn/turn-stage.ts';
import { VadStage } from '../../workers/realtime/pipeline/input/vad-stage.ts';
import { callerAudio, platformTurnSettings } from '../../support/realtime/caller-audio.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';

const RATE = 8000;
/** A short final wait: speech the STT gives no words for is handed on (as nothing) soon after it ends. */
const SETTINGS = platformTurnSettings({ finalWaitMs: 400 });
const REPLY = [
  'Our opening hours are from nine in the morning until six in the evening on weekdays.',
  'On Saturdays we open at ten and close at four in the afternoon.',
];

/**
 * The voice pipeline from the caller's audio to the agent's (real Silero VAD → turn stage → playback stage) with a
 * far end that plays the agent's audio in real time like Twilio's buffer: marks echoed once the audio before them
 * has played, all of them at once (a moment later) on a clear. The agent speaks a two-sentence reply (flite); the caller's audio and
 * the STT's transcripts are pushed at the head in real time.
 */
async function agentSpeaking() {
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const far = { queueEnd: 0, bytes: 0, clears: 0, timers: new Map<string, NodeJS.Timeout>() };
  const out: Frame[] = [];
  const errors: unknown[] = [];
  let p: Pipeline | null = null;
  const echo = (name: string) => {
    far.timers.delete(name);
    p?.push({ kind: 'mark', name });
  };
  const playback = new Playback(
    {
      outRate: RATE,
      sendAudio: (pcm) => {
        far.bytes += pcm.length;
        far.queueEnd = Math.max(far.queueEnd, now()) + (pcm.length / 2 / RATE) * 1000;
      },
      sendMark: (name) =>
        far.timers.set(
          name,
          setTimeout(() => echo(name), Math.max(0, far.queueEnd - now())),
        ),
      sendClear: () => {
        far.clears++;
        far.queueEnd = now();
        // The flushed marks come back over the network, after the clear.
        for (const [name, t] of far.timers) {
          clearTimeout(t);
          far.timers.set(
            name,
            setTimeout(() => echo(name), 1),
          );
        }
      },
    },
    now,
  );
  const conv = new Conversation(now, playback, 'dev_test');
  p = new Pipeline(
    [
      new VadStage(new SileroVad(), RATE, { threshold: 0.5, startMs: 60, endpointMs: 300, pauseMs: PREPARE_AFTER_MS }),
      new TurnStage(conv, {
        settings: SETTINGS,
        inRate: RATE,
        streaming: true,
        interruption: interruptionDetector(
          { bargeInMinMs: SETTINGS.bargeInMinMs, bargeInForceMs: SETTINGS.bargeInForceMs },
          { name: 'default', resumeFalseStarts: true },
        ),
      }),
      new PlaybackStage(conv, null),
    ],
    (f) => out.push(f),
    (_s, e) => errors.push(e),
  );
  const pipe = p;
  pipe.push({ kind: 'start' });
  const t = conv.newTurn('What are your opening hours?', 0, 0);
  let replyBytes = 0;
  for (const [i, text] of REPLY.entries()) {
    const pcm = await fliteUtterance(text, RATE);
    replyBytes += pcm.length;
    pipe.push({ kind: 'tts-audio', turnId: t.id, sentence: i, text, pcm, sampleRate: RATE, last: true });
  }
  pipe.push({ kind: 'llm-done', turnId: t.id, llmMs: 0 });
  const caller = callerAudio((f) => pipe.push(f), RATE);
  /** Caller audio in real time, 20 ms at a time (the far end plays the agent meanwhile). */
  const say = async (pcm: Buffer) => {
    const start = performance.now();
    for (let off = 0; off < pcm.length; off += 320) {
      caller.audio(pcm.subarray(off, Math.min(pcm.length, off + 320)));
      const due = start + ((off + 320) / 2 / RATE) * 1000;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    }
  };
  const until = async (pred: () => boolean, what: string, ms = 30_000) => {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`${what}: not seen; got ${out.map((f) => f.kind).join(',')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const reply = () =>
    out.flatMap((f) => (f.kind === 'turn-done' && f.record.speaker === 'assistant' ? [f.record as TurnRecord] : []));
  const interruptions = () => out.flatMap((f) => (f.kind === 'interruption' ? [f.record] : []));
  const close = () => {
    for (const timer of far.timers.values()) clearTimeout(timer);
    pipe.push({ kind: 'end', reason: 'agent-ended' });
  };
  return { conv, pipe, far, out, errors, replyBytes, caller, say, until, reply, interruptions, close, now };
}

describe('a tentative stop: caller audio over the agent with no words yet', () => {
  it('the agent stops at once and, when no words come, goes on from where it stopped (not again, not dropped)', async () => {
    const a = await agentSpeaking();
    await new Promise((r) => setTimeout(r, 1500));
    // A second of voice the STT makes no words of (a cough, a hum in the background): past forceMs (900 ms).
    const noise = trimSilence(await fliteUtterance('Mmmm hmmm.', RATE));
    expect(noise.length / 2 / RATE).toBeGreaterThan(1.0);
    const sentBefore = a.far.bytes;
    await a.say(noise);
    a.caller.silence(1500);
    await a.until(() => a.far.clears > 0, 'the agent stopped');
    // The rest of the reply is played again, from where it stopped: more audio, less than the whole reply again.
    await a.until(() => a.reply().length === 1, 'the reply played out', 40_000);
    const [r] = a.reply();
    expect(r!.interrupted).toBe(false);
    expect(r!.text).toBe(REPLY.join(' '));
    expect(a.interruptions()).toEqual([]);
    const resent = a.far.bytes - sentBefore;
    expect(resent).toBeGreaterThan(RATE * 2 * 0.5);
    expect(resent).toBeLessThan(a.replyBytes - RATE * 2);
    expect(a.out.some((f) => f.kind === 'utterance')).toBe(false);
    a.close();
    expect(a.errors).toEqual([]);
  }, 90_000);

  it('words that come after the stop make it a barge-in: the reply is cut to what was heard, nothing resumes', async () => {
    const a = await agentSpeaking();
    await new Promise((r) => setTimeout(r, 1500));
    const speech = trimSilence(await fliteUtterance('Wait, stop, I only need Saturday.', RATE));
    // A lagging STT: no words until the caller has finished.
    await a.say(speech);
    await a.until(() => a.far.clears > 0, 'the agent stopped');
    const bytesAtStop = a.far.bytes;
    a.pipe.push({ kind: 'transcript', text: 'Wait, stop, I only need Saturday.', final: true, atMs: a.now() });
    a.caller.silence(800);
    await a.until(() => a.reply().length === 1, 'the reply closed');
    const [r] = a.reply();
    expect(r!.interrupted).toBe(true);
    expect(r!.text.length).toBeLessThan(REPLY.join(' ').length);
    const [i] = a.interruptions();
    expect(i).toBeDefined();
    await a.until(() => a.out.some((f) => f.kind === 'utterance'), 'the caller turn');
    expect(a.far.bytes).toBe(bytesAtStop);
    a.close();
    expect(a.errors).toEqual([]);
  }, 90_000);
});
