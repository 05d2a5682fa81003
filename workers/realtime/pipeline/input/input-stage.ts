import { int16ToPcm, pcmToInt16 } from '../../../../shared/kernel/audio/pcm.ts';
import type { DataFrame, SystemFrame } from '../frames.ts';
import { Stage } from '../stage.ts';
import type { InputProcessor } from './input-processor.ts';

/**
 * audio-in → audio-in, through the agent's input processors in order (input-processor.ts); every other frame passes.
 * At the head of the pipeline, so the answering-machine watch, the VAD and the STT all hear the processed audio.
 * Synchronous: a chunk is processed in the turn it arrives (a filter costs microseconds per 20 ms).
 */
export class InputStage extends Stage {
  constructor(private readonly processors: readonly InputProcessor[]) {
    super('input', { sync: true, cancellable: false });
  }

  protected override onData(frame: DataFrame): void {
    if (frame.kind !== 'audio-in') return this.emit(frame);
    let samples = pcmToInt16(frame.pcm);
    for (const p of this.processors) samples = p.process(samples);
    this.emit({ ...frame, pcm: int16ToPcm(samples) });
  }

  protected override onSystem(frame: SystemFrame): void {
    if (frame.kind === 'end') for (const p of this.processors) p.close?.();
  }
}
