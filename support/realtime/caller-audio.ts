import { loadConfig } from '../../shared/kernel/config/index.ts';
import { endpointingPolicy } from '../../workers/realtime/pipeline/turn/endpointing.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import type { SessionSettings } from '../../workers/realtime/call/types.ts';

/**
 * Caller audio pushed into a pipeline as a transport does: 20 ms `audio-in` frames of PCM s16le at `rate`, on an
 * audio clock (`atMs`) that the pushes advance. For tests and benchmarks that drive the real VAD and turn stage.
 */
export function callerAudio(push: (f: Frame) => void, rate: number) {
  const bytes = (rate / 50) * 2;
  const clock = { atMs: 0 };
  const audio = (pcm: Buffer) => {
    for (let off = 0; off < pcm.length; off += bytes) {
      const chunk = pcm.subarray(off, Math.min(pcm.length, off + bytes));
      push({ kind: 'audio-in', pcm: chunk, sampleRate: rate, atMs: clock.atMs });
      clock.atMs += (chunk.length / 2 / rate) * 1000;
    }
  };
  const silence = (ms: number) => audio(Buffer.alloc(Math.round((ms / 1000) * rate) * 2));
  return { clock, audio, silence };
}

/** A call's turn settings at the platform's defaults (REALTIME_ENDPOINTING_*, REALTIME_BARGE_IN_*), over `extra`. */
export function platformTurnSettings(extra: Partial<SessionSettings> = {}): SessionSettings {
  const c = loadConfig({ NODE_ENV: 'test' });
  return {
    endpointing: endpointingPolicy(c, { turn_taking: null }),
    bargeInMinMs: c.REALTIME_BARGE_IN_MIN_MS,
    bargeInForceMs: c.REALTIME_BARGE_IN_FORCE_MS,
    maxSessionSeconds: 60,
    vadThreshold: 0.5,
    finalWaitMs: 20_000,
    amd: false,
    ...extra,
  };
}
