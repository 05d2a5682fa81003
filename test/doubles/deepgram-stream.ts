import {
  FAST,
  startLiveDouble,
  timedWords,
  type LatencyProfile,
  type LiveDouble,
  type Session,
  type Utterance,
} from './live-double.ts';

/**
 * Deepgram live transcription double: the `/v1/listen` WebSocket as Deepgram speaks it. Auth
 * `Authorization: Token <key>` (a refused handshake answers the HTTP status with `{err_code, err_msg}`); raw audio
 * needs `encoding` (linear16|mulaw) and `sample_rate`. Interim `Results` (`is_final: false`) while speech goes on
 * (with `interim_results=true`), a final (`is_final`, `speech_final`) after the query's `endpointing` silence;
 * `Finalize` flushes (`from_finalize`), `CloseStream` flushes, sends `Metadata` and closes 1000; `KeepAlive` is
 * recorded. Timings follow a declared latency profile so realtime pipeline tests can budget for them.
 */

export type DeepgramLatencyProfile = LatencyProfile;
export type DeepgramStreamDouble = LiveDouble;
export type { LiveConnection } from './live-double.ts';

export const DEEPGRAM_FAST: DeepgramLatencyProfile = FAST;
/** Roughly what Deepgram's hosted nova models show on a good link. */
export const DEEPGRAM_TYPICAL: DeepgramLatencyProfile = {
  connectMs: 80,
  interimMs: 150,
  interimEveryMs: 250,
  finalMs: 120,
};

function results(u: Utterance, words: string[], isFinal: boolean, speechFinal: boolean, extra = {}) {
  return {
    type: 'Results',
    channel_index: [0, 1],
    duration: Number((u.last - u.start).toFixed(3)),
    start: Number(u.start.toFixed(3)),
    is_final: isFinal,
    speech_final: speechFinal,
    channel: {
      alternatives: [
        {
          transcript: words.join(' '),
          confidence: 0.98,
          words: timedWords(u, words).map((w) => ({
            word: w.word.toLowerCase().replace(/[^\w']/g, ''),
            punctuated_word: w.word,
            start: w.start,
            end: w.end,
            confidence: 0.98,
          })),
        },
      ],
    },
    metadata: { request_id: 'req-double', model_info: { name: 'double' } },
    ...extra,
  };
}

export function startDeepgramStreamDouble(
  opts: { latency?: DeepgramLatencyProfile; script?: string[]; key?: string } = {},
): Promise<DeepgramStreamDouble> {
  const final = (s: Session, u: Utterance | null, speechFinal: boolean, extra = {}) => {
    if (u) s.send(results(u, u.words, true, speechFinal, extra), d.latency.finalMs);
  };
  let d: LiveDouble;
  return startLiveDouble(
    {
      path: '/v1/listen',
      refuse(query, headers, key) {
        if (headers.authorization !== `Token ${key}`) return [401, 'Invalid credentials.'];
        if (!['linear16', 'mulaw'].includes(query.get('encoding') ?? '') || !(Number(query.get('sample_rate')) > 0)) {
          return [400, 'encoding and sample_rate are required for raw audio'];
        }
        return null;
      },
      errorBody: (status, message) =>
        JSON.stringify({
          err_code: status === 401 ? 'INVALID_AUTH' : status === 429 ? 'TOO_MANY_REQUESTS' : 'Bad Request',
          err_msg: message,
          request_id: 'req-double',
        }),
      encoding: (q) => (q.get('encoding') === 'mulaw' ? 'mulaw' : 'linear16'),
      sampleRate: (q) => Number(q.get('sample_rate')),
      endpointingS: (q) => Number(q.get('endpointing') ?? 10) / 1000,
      onInterim(s, u) {
        // The hypothesis grows with the speech heard: one more word per interim.
        if (s.conn.query.get('interim_results') === 'true') {
          s.send(results(u, u.words.slice(0, u.interims), false, false), d.latency.interimMs);
        }
      },
      onFinal: (s, u) => final(s, u, true),
      onControl(s, type) {
        if (type === 'Finalize') final(s, s.flush(), false, { from_finalize: true });
        if (type === 'CloseStream') {
          final(s, s.flush(), true);
          s.send(
            { type: 'Metadata', request_id: 'req-double', duration: s.audioSeconds(), channels: 1 },
            d.latency.finalMs,
          );
          s.closeAfterQueued(1000);
        }
      },
    },
    { ...opts, key: opts.key ?? 'test-key-deepgram' },
  ).then((double) => (d = double));
}
