import { engineToApiError } from '../../shared/kernel/errors/engine-error.ts';
import type { SttProgress } from '../../shared/engines/stt/types.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { prepareTranscription, type TranscribeCall } from '../../shared/domains/speech/transcription.ts';

export interface TranscriptionStream {
  provider: string;
  billable: boolean;
  /**
   * Segments as the engine decodes them, then the result. The first event has already been produced, and the
   * consumer must read to the end or stop iterating (which stops the engine and settles the charge).
   */
  events: AsyncIterable<SttProgress>;
}

/**
 * A transcription whose segments are passed on as they are decoded (`stream=true`). Input problems (undecodable
 * audio, a language the engine cannot serve, a rejected key, 402) and the engine's first failure surface before
 * this returns, so they are ordinary error responses; after that, the stream carries them. Metering is the
 * synchronous call's: the audio seconds are reserved up front, committed when the result arrives (before it is
 * passed on) and refunded when decoding fails or the client goes away.
 */
export async function transcribeAudioIncremental(infra: Infra, call: TranscribeCall): Promise<TranscriptionStream> {
  const { engine, billable, seconds, reservation, request } = await prepareTranscription(infra, call);
  let settled = false;
  const refund = async () => {
    if (settled) return;
    settled = true;
    await reservation?.refund();
  };
  const progress = engine.transcribeIncremental(request);
  try {
    const first = await progress.next();
    async function* events(): AsyncGenerator<SttProgress> {
      try {
        for (let next = first; !next.done; next = await progress.next()) {
          if (next.value.type === 'result') {
            settled = true;
            await reservation?.commit(seconds);
          }
          yield next.value;
        }
      } catch (e) {
        throw engineToApiError(e, engine.provider);
      } finally {
        await refund();
        await progress.return(undefined);
      }
    }
    return { provider: engine.provider, billable, events: events() };
  } catch (e) {
    await refund();
    throw engineToApiError(e, engine.provider);
  }
}
