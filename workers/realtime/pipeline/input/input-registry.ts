import type { InputProcessorChoice, INPUT_PROCESSORS } from '../../../../shared/contracts/turn-seams.ts';
import { fromRegistry, type SeamRegistry } from '../seam-registry.ts';
import { HighPassFilter } from './highpass.ts';
import type { InputContext, InputProcessor } from './input-processor.ts';
import { PassthroughProcessor } from './passthrough.ts';
import { RnnoiseSuppressor } from './rnnoise.ts';

/** Every input processor an agent may name (`audio.inputProcessors[].name`), one line each. */
export const INPUT_PROCESSOR_REGISTRY: SeamRegistry<typeof INPUT_PROCESSORS, InputContext, InputProcessor> = {
  passthrough: () => new PassthroughProcessor(),
  highpass: (ctx, opts) => new HighPassFilter(ctx.inRate, opts.cutoffHz),
  rnnoise: (ctx) => new RnnoiseSuppressor(ctx.inRate),
};

/** The agent's input processors, in the order it named them (none: the audio goes on as it arrived). */
export function inputProcessors(ctx: InputContext, choices: readonly InputProcessorChoice[] = []): InputProcessor[] {
  return choices.map((c) => fromRegistry(INPUT_PROCESSOR_REGISTRY, ctx, c));
}
