// @echogarden/rnnoise-wasm ships no type declarations; this is the part of its Emscripten module the platform uses.
declare module '@echogarden/rnnoise-wasm' {
  export interface RnnoiseModule {
    /** The module's heap as floats; re-read after any allocation (the memory may grow and replace it). */
    HEAPF32: Float32Array;
    _malloc(bytes: number): number;
    _free(ptr: number): void;
    /** A denoiser state (model 0 = the built-in weights). */
    _rnnoise_create(model: number): number;
    _rnnoise_destroy(state: number): void;
    _rnnoise_get_frame_size(): number;
    /** Denoises one frame in place (floats at 16-bit scale, 48 kHz); returns the frame's voice probability. */
    _rnnoise_process_frame(state: number, out: number, input: number): number;
  }
  const createRnnoise: () => Promise<RnnoiseModule>;
  export default createRnnoise;
}
