import type { InputProcessor } from './input-processor.ts';

/** `passthrough`: the caller audio as it arrived (today's behaviour; what an agent without processors gets). */
export class PassthroughProcessor implements InputProcessor {
  readonly name = 'passthrough';

  process(samples: Int16Array): Int16Array {
    return samples.slice();
  }
}
