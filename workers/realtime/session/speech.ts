import { speechEngines } from '../../../shared/engines/speech-registry.ts';
import type { Infra } from '../../../shared/runtime/infra.ts';
import type { SpeechRegistries } from './engines.ts';

/** The speech engines of this process (TTS, STT and the Silero VAD), from the speech area's registry. */
export function speechFor(infra: Infra): SpeechRegistries {
  return speechEngines(infra);
}
