import type { SttProgress } from '../../engines/stt/types.ts';
import type { Infra } from '../../platform/infra.ts';
import { prepareTranscription, sttFailure, type TranscribeCall } from './transcription.ts';

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
 * this returns, so they are ordinary error responses; after that, the stream carries them. Metering: the audio
 * seconds are reserved up front and committed in full when the result arrives (before it is passed on). A stream
 * that ends before its result (the client went away, the engine failed part-way) is charged for the audio whose
 * text was delivered: up to the end of the last segment the consumer took and asked past (segment times run from
 * the start of the recording); with nothing delivered the hold is refunded. Never refunded after delivery.
 */
export async function transcribeAudioIncremental(infra: Infra, call: TranscribeCall): Promise<TranscriptionStream> {
  const { engine, billable, seconds, reservation, request } = await prepareTranscription(infra, call);
  let settled = false;
  let deliveredSeconds = 0;
  const settlePartial = async () => {
    if (settled) return;
    settled = true;
    if (deliveredSeconds > 0) await reservation.commit(deliveredSeconds).catch(() => reservation.refund());
    else await reservation.refund();
  };
  const progress = engine.transcribeIncremental(request);
  try {
    const first = await progress.next();
    async function* events(): AsyncGenerator<SttProgress> {
      try {
        for (let next = first; !next.done; next = await progress.next()) {
          const ev = next.value;
          if (ev.type === 'result') {
            settled = true;
            await reservation.commit(seconds);
          }
          yield ev;
          // The consumer asked for more: the segment before went out, and the audio up to its end was delivered.
          if (ev.type === 'segment') deliveredSeconds = Math.max(deliveredSeconds, Math.min(seconds, ev.segment.end));
        }
      } catch (e) {
        throw sttFailure(e, engine.provider);
      } finally {
        await settlePartial();
        await progress.return(undefined);
      }
    }
    return { provider: engine.provider, billable, events: events() };
  } catch (e) {
    await settlePartial();
    throw sttFailure(e, engine.provider);
  }
}
