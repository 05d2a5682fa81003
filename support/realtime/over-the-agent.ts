import type { InterruptionChoice } from '../../shared/contracts/turn-seams.ts';
import { SileroVad } from '../../shared/engines/vad/silero.ts';
import { int16ToPcm } from '../../shared/kernel/audio/pcm.ts';
import { Conversation } from '../../workers/realtime/pipeline/conversation.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { StageHarness } from '../../workers/realtime/pipeline/harness.ts';
import { VadStage } from '../../workers/realtime/pipeline/input/vad-stage.ts';
import { Playback } from '../../workers/realtime/pipeline/playback.ts';
import { interruptionDetector } from '../../workers/realtime/pipeline/turn/interruption-registry.ts';
import { TurnStage } from '../../workers/realtime/pipeline/turn/turn-stage.ts';

/**
 * A line's 8 kHz samples through the real VAD stage (Silero; threshold 0.5, start 60 ms, endpoint 300 ms) in 20 ms
 * frames, each batch of four scored before the next is sent. Returns the stage's output in order: the audio, the
 * VAD's frames and its speech events, ready for `bargeInsOverTheAgent`.
 */
export async function sileroLine(x: Int16Array): Promise<Frame[]> {
  const rate = 8000;
  const chunk = rate / 50;
  const vadFrame = 256; // Silero's window at 8 kHz
  const h = new StageHarness(new VadStage(new SileroVad(), rate, { threshold: 0.5, startMs: 60, endpointMs: 300 }));
  const scored = () => h.out.filter((f) => f.kind === 'vad-frame').length;
  for (let off = 0; off < x.length; off += 4 * chunk) {
    for (let c = off; c < Math.min(x.length, off + 4 * chunk); c += chunk)
      h.push({ kind: 'audio-in', pcm: int16ToPcm(x.slice(c, c + chunk)), sampleRate: rate, atMs: (c / rate) * 1000 });
    await h.until(() => scored() >= Math.floor(Math.min(x.length, off + 4 * chunk) / vadFrame), 20_000);
  }
  return h.out;
}

/** A barge-in the turn stage decided: its reason and the audio time (ms) it was decided at. */
export interface BargeIn {
  reason: string;
  atMs: number;
}

/**
 * The real turn stage with the agent speaking throughout (10 s of audio queued), fed the VAD stage's output in order
 * on the audio's clock. `heard(clockMs)` says what a streaming STT has transcribed of the caller by then (an
 * interim), or null while it has nothing new. Barge-in minimum 200 ms, force 900 ms, as the platform's defaults.
 * Returns the barge-ins.
 */
export function bargeInsOverTheAgent(
  frames: Frame[],
  interruption: InterruptionChoice,
  heard: (clockMs: number) => string | null,
  rate = 8000,
): BargeIn[] {
  let clock = 0;
  const playback = new Playback(
    { outRate: rate, sendAudio: () => {}, sendMark: () => {}, sendClear: () => {} },
    () => clock,
  );
  const conv = new Conversation(() => clock, playback, 'dev_test');
  const endpointing = { fixedMs: 500, adaptive: true, completeMs: 250, incompleteMs: 1500, preemptive: false };
  const settings = { bargeInMinMs: 200, bargeInForceMs: 900, finalWaitMs: 20_000 };
  const stage = new TurnStage(conv, {
    settings: { ...settings, endpointing: { ...endpointing, eagerness: 'normal' } },
    inRate: rate,
    streaming: true,
    interruption: interruptionDetector(settings, interruption),
  });
  const stops: BargeIn[] = [];
  stage.connect(
    (f) => void (f.kind === 'interrupt' && stops.push({ reason: f.reason, atMs: clock })),
    () => {},
  );
  conv.newTurn('What are your opening hours?', 0, 0);
  playback.sendAudio(Buffer.alloc(2 * rate * 10));
  for (const f of frames) {
    if (f.kind === 'audio-in') clock = f.atMs + 20;
    stage.push(f);
    const text = heard(clock);
    if (text !== null) stage.push({ kind: 'transcript', text, final: false, atMs: clock, endMs: clock });
  }
  stage.push({ kind: 'end', reason: 'agent-ended' });
  return stops;
}
