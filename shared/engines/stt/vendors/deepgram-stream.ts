import { EngineError } from '../../../kernel/errors/engine-error.ts';
import type { SttStreamEvent, SttStreamOptions, TranscriptWord } from '../types.ts';
import { LiveSocketStream } from './live-socket.ts';

/** Live options: the interface's, plus the wire encoding (phone audio can go to Deepgram as μ-law untouched). */
export interface DeepgramStreamOptions extends SttStreamOptions {
  encoding?: 'linear16' | 'mulaw';
}

interface DgResults {
  type: 'Results';
  start: number;
  duration: number;
  is_final?: boolean;
  channel?: {
    alternatives?: {
      transcript?: string;
      words?: { word: string; punctuated_word?: string; start: number; end: number }[];
    }[];
  };
}

/**
 * Deepgram live transcription (`wss://…/v1/listen?…`, `Authorization: Token`): interim `Results` become
 * `partial` events and `is_final` ones `final` events; `CloseStream` flushes and closes; `KeepAlive` keeps an idle
 * socket open (Deepgram closes after 10 s without data). Close code 1008 (bad audio or parameters) is permanent,
 * other abnormal closes (1011 …) retryable.
 */
export function deepgramLiveStream(
  url: string,
  key: string,
  keepAliveMs: number,
  signal?: AbortSignal,
): LiveSocketStream {
  return new LiveSocketStream(
    {
      provider: 'deepgram',
      url,
      headers: { authorization: `Token ${key}` },
      endMessage: JSON.stringify({ type: 'CloseStream' }),
      keepAlive: { message: JSON.stringify({ type: 'KeepAlive' }), everyMs: keepAliveMs },
      onText(text, emit) {
        const msg = JSON.parse(text) as { type?: string };
        if (msg.type !== 'Results') return; // Metadata, SpeechStarted, UtteranceEnd carry no transcript
        const r = msg as DgResults;
        const alt = r.channel?.alternatives?.[0];
        const transcript = alt?.transcript?.trim() ?? '';
        if (!transcript) return;
        if (!r.is_final) {
          const last = alt?.words?.at(-1);
          return emit({ type: 'partial', text: transcript, ...(last ? { end: last.end } : {}) });
        }
        const words: TranscriptWord[] = (alt?.words ?? []).map((w) => ({
          word: w.punctuated_word ?? w.word,
          start: w.start,
          end: w.end,
        }));
        emit({
          type: 'final',
          text: transcript,
          start: r.start,
          end: r.start + r.duration,
          words,
        } satisfies SttStreamEvent);
      },
      closeError: (code, reason) =>
        new EngineError(
          'deepgram',
          code === 1008 ? 'bad_request' : 'upstream',
          `deepgram: ${reason || `socket closed (${code})`}`,
          code !== 1008,
        ),
    },
    signal,
  );
}
