/**
 * The input seam (issue 30): caller audio on its way in, before the answering-machine watch, the VAD and the STT
 * hear it (noise suppression, a filter, a gain). The agent names its processors in order (`audio.inputProcessors`,
 * input-registry.ts); with none, the audio goes on as it arrived and no stage is added. The call recording keeps
 * the caller's audio as it arrived.
 */
export interface InputProcessor {
  readonly name: string;
  /**
   * One chunk of caller audio (16-bit samples at the line's rate), chunks in order: the processed chunk, as many
   * samples (the audio clock of the call counts them). It is a new array: the input may be shared (the recorder).
   */
  process(samples: Int16Array): Int16Array;
  /** The call ended: free what the processor holds outside the JavaScript heap (a model's state). */
  close?(): void;
}

/** What every input processor is built from. */
export interface InputContext {
  /** The caller audio's sample rate. */
  inRate: number;
}
