import { performance } from 'node:perf_hooks';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { ReplyStage } from '../../workers/realtime/pipeline/answer/reply-stage.ts';
import { Conversation } from '../../workers/realtime/pipeline/conversation.ts';
import type { DataFrame, Frame } from '../../workers/realtime/pipeline/frames.ts';
import { PlaybackStage } from '../../workers/realtime/pipeline/output/playback-stage.ts';
import { SentenceStage } from '../../workers/realtime/pipeline/output/sentence-stage.ts';
import { TtsStage } from '../../workers/realtime/pipeline/output/tts-stage.ts';
import { Playback, type AudioSink } from '../../workers/realtime/pipeline/playback.ts';
import { Pipeline } from '../../workers/realtime/pipeline/stage.ts';

/**
 * The reply half of the voice pipeline (reply → sentences → local TTS → playback) on the far end `sink` a test
 * gives (8 kHz), with what came out of it: the frames, stage errors, a wait for a state (woken by each frame out)
 * and the assistant rows closed so far. `describe` names the far end's log in the wait's error.
 */
export function replyPipeline(sink: Omit<AudioSink, 'outRate'>, describe: () => string) {
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const playback = new Playback({ outRate: 8000, ...sink }, now);
  const conv = new Conversation(now, playback, 'dev_test');
  const out: Frame[] = [];
  const errors: unknown[] = [];
  let waiters: Array<() => void> = [];
  const p = new Pipeline(
    [
      new ReplyStage(conv),
      new SentenceStage(),
      new TtsStage(new LocalTtsEngine(), { voiceId: 'default', speed: 1, pitch: 1 }, 8000, conv),
      new PlaybackStage(conv, null),
    ],
    (f) => {
      out.push(f);
      for (const w of waiters.splice(0)) w();
    },
    (_stage, e) => errors.push(e),
  );
  const until = async (pred: () => boolean, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`not met; ${describe()}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        waiters.push(() => (clearTimeout(t), resolve()));
      });
    }
  };
  const rows = () => out.flatMap((f) => (f.kind === 'turn-done' && f.record.speaker === 'assistant' ? [f.record] : []));
  return { p, conv, playback, now, out, errors, until, rows, reset: () => (waiters = []) };
}

/** The caller's finished utterance as the turn stage hands it on at `at`: 1.5 s of speech, ended 300 ms before. */
export function utteranceAt(text: string, at: number): DataFrame {
  return {
    kind: 'utterance',
    text,
    onsetAt: at - 1500,
    lastSpeechAt: at - 300,
    finalAt: at,
    endpointAt: at,
    endpointWaitMs: 300,
    vadLagMs: 0,
  };
}
