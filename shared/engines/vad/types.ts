/**
 * Voice activity detection. Stateful per audio stream (Silero keeps an RNN state), so an engine hands out
 * sessions. Frames are mono PCM at the engine's sample rate, `frameSamples` long.
 */
export interface VadSession {
  /** Probability 0-1 that the frame holds speech. */
  push(frame: Int16Array): Promise<number>;
  reset(): void;
}

export interface VadEngine {
  readonly label: string;
  readonly sampleRate: number;
  readonly frameSamples: number;
  session(): VadSession;
  /** The same detector reading `rate` natively (no resampling), when the model supports it; otherwise null. */
  atRate?(rate: number): VadEngine | null;
}
