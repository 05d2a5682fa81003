import { Resampler } from '../../../shared/audio/resampler.ts';
import type { TtsEngine } from '../../../shared/engines/tts/types.ts';
import type { DataFrame } from './frames.ts';
import { Stage } from './stage.ts';

export interface TtsVoice {
  voiceId: string;
  speed: number;
  pitch: number;
  model?: string | null;
  language?: string;
  apiKey?: string;
}

export interface TtsStageHooks {
  synthStarted(turnId: string, sentence: number, atMs: number): void;
  firstAudio(turnId: string, sentence: number, atMs: number): void;
  failed(turnId: string, message: string): void;
  now(): number;
}

/**
 * sentence → tts-audio. Each sentence is synthesized as its own request (so the first one speaks while the LLM
 * still writes), resampled to the transport's rate with filter state kept across the engine's chunks, and cut off
 * by the stage's AbortSignal on a barge-in.
 */
export class TtsStage extends Stage {
  constructor(
    private readonly engine: TtsEngine,
    private readonly voice: TtsVoice,
    private readonly outRate: number,
    private readonly hooks: TtsStageHooks,
  ) {
    super('tts');
  }

  protected override async onData(frame: DataFrame, signal: AbortSignal): Promise<void> {
    if (frame.kind === 'llm-done') {
      if (frame.error) this.hooks.failed(frame.turnId, frame.error);
      this.emit(frame);
      return;
    }
    if (frame.kind !== 'sentence') return this.emit(frame);
    const { turnId, index, text, last } = frame;
    const done = (pcm: Buffer) =>
      this.emit({ kind: 'tts-audio', turnId, sentence: index, text, pcm, sampleRate: this.outRate, last: true });
    if (!text.trim()) {
      if (last) done(Buffer.alloc(0));
      return;
    }
    this.hooks.synthStarted(turnId, index, this.hooks.now());
    let first = true;
    try {
      const audio = await this.engine.synthesize({
        text,
        voiceId: this.voice.voiceId,
        speed: this.voice.speed,
        pitch: this.voice.pitch,
        model: this.voice.model,
        language: this.voice.language,
        apiKey: this.voice.apiKey,
        signal,
      });
      const rs = audio.sampleRate === this.outRate ? null : new Resampler(audio.sampleRate, this.outRate);
      for await (const chunk of audio.chunks) {
        if (signal.aborted) return;
        const pcm = rs ? rs.processPcm(chunk) : chunk;
        if (!pcm.length) continue;
        if (first) {
          first = false;
          this.hooks.firstAudio(turnId, index, this.hooks.now());
        }
        this.emit({ kind: 'tts-audio', turnId, sentence: index, text, pcm, sampleRate: this.outRate, last: false });
      }
      if (signal.aborted) return;
      done(rs ? rs.flushPcm() : Buffer.alloc(0));
    } catch (e) {
      if (signal.aborted) return;
      this.hooks.failed(turnId, `tts: ${(e as Error).message ?? 'error'}`);
      done(Buffer.alloc(0));
    }
  }
}
