import { randomUUID } from 'node:crypto';
import {
  FAST,
  startLiveDouble,
  timedWords,
  type LatencyProfile,
  type LiveDouble,
  type Session,
  type Utterance,
} from '../../shared/domains/agent-tests/simulators/live-double.ts';

/**
 * ElevenLabs Scribe realtime double: `/v1/speech-to-text/realtime?model_id&audio_format=pcm_<rate>|ulaw_8000
 * &commit_strategy=vad&include_timestamps`, `xi-api-key` (refused: HTTP 401 `{detail}`). Audio arrives as base64
 * `input_audio_chunk` messages; `partial_transcript` while speech goes on, `committed_transcript` and
 * `committed_transcript_with_timestamps` after the VAD silence or a chunk with `commit: true`. The server never
 * closes the socket itself.
 */
export function startElevenLabsRealtimeDouble(
  opts: { latency?: LatencyProfile; script?: string[]; key?: string } = {},
): Promise<LiveDouble> {
  let d: LiveDouble;
  const format = (q: URLSearchParams) => /^(pcm|ulaw)_(\d+)$/.exec(q.get('audio_format') ?? '');
  const commit = (s: Session, u: Utterance | null) => {
    if (!u) return;
    const text = u.words.join(' ');
    s.send({ message_type: 'committed_transcript', text }, d.latency.finalMs);
    if (s.conn.query.get('include_timestamps') === 'true') {
      s.send(
        {
          message_type: 'committed_transcript_with_timestamps',
          text,
          language_code: 'en',
          words: timedWords(u).flatMap((w, i) => [
            ...(i ? [{ text: ' ', start: w.start, end: w.start, type: 'spacing', logprob: 0 }] : []),
            { text: w.word, start: w.start, end: w.end, type: 'word', logprob: -0.1 },
          ]),
        },
        d.latency.finalMs,
      );
    }
  };
  return startLiveDouble(
    {
      path: '/v1/speech-to-text/realtime',
      refuse(query, headers, key) {
        if (headers['xi-api-key'] !== key) return [401, 'Invalid API key'];
        if (!query.get('model_id') || !format(query)) return [400, 'model_id and audio_format are required'];
        return null;
      },
      errorBody: (_status, message) => JSON.stringify({ detail: { status: 'error', message } }),
      encoding: (q) => (format(q)?.[1] === 'ulaw' ? 'mulaw' : 'linear16'),
      sampleRate: (q) => Number(format(q)?.[2] ?? 16000),
      endpointingS: (q) => Number(q.get('vad_silence_threshold_secs') ?? 0.5),
      onOpen: (s) => s.send({ message_type: 'session_started', session_id: randomUUID(), config: {} }, 0),
      onInterim: (s, u) =>
        s.send(
          { message_type: 'partial_transcript', text: u.words.slice(0, u.interims).join(' ') },
          d.latency.interimMs,
        ),
      onFinal: (s, u) => commit(s, u),
      onControl(s, type, msg) {
        if (type !== 'input_audio_chunk') return;
        if (typeof msg.audio_base_64 === 'string' && msg.audio_base_64)
          s.audio(Buffer.from(msg.audio_base_64, 'base64'));
        if (msg.commit === true) commit(s, s.flush());
      },
    },
    { latency: opts.latency ?? FAST, script: opts.script, key: opts.key ?? 'test-key-elevenlabs' },
  ).then((double) => (d = double));
}
