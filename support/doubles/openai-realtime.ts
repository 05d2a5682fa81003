import { randomBytes } from 'node:crypto';
import {
  startLiveDouble,
  FAST,
  type LatencyProfile,
  type LiveDouble,
  type Session,
  type Utterance,
} from '../../shared/domains/agent-tests/simulators/live-double.ts';

/**
 * OpenAI Realtime transcription double: `/v1/realtime?intent=transcription` with Bearer auth (refused: HTTP 401
 * `{error: {...}}`). Expects a `session.update` of type `transcription` (audio/pcm at 24 kHz or audio/pcmu) and
 * base64 `input_audio_buffer.append` frames; its server VAD sends `speech_started`, then after the silence
 * `speech_stopped`, `committed`, word `delta`s and `completed`; `input_audio_buffer.commit` commits what is
 * buffered, or answers the `input_audio_buffer_commit_empty` error. The server never closes the socket itself.
 */
export function startOpenAiRealtimeDouble(
  opts: { latency?: LatencyProfile; script?: string[]; key?: string } = {},
): Promise<LiveDouble & { sessions: Record<string, unknown>[] }> {
  let d: LiveDouble;
  const sessions: Record<string, unknown>[] = [];
  const items = new WeakMap<Session, { id: string; started: boolean }>();
  const current = (s: Session) => {
    let it = items.get(s);
    if (!it) items.set(s, (it = { id: `item_${randomBytes(6).toString('hex')}`, started: false }));
    return it;
  };
  const transcribe = (s: Session, u: Utterance) => {
    const item = current(s);
    items.delete(s);
    const ms = (x: number) => Math.round(x * 1000);
    if (!item.started)
      s.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: ms(u.start), item_id: item.id }, 0);
    s.send(
      { type: 'input_audio_buffer.speech_stopped', audio_end_ms: ms(u.last), item_id: item.id },
      d.latency.finalMs,
    );
    s.send({ type: 'input_audio_buffer.committed', previous_item_id: null, item_id: item.id }, d.latency.finalMs);
    u.words.forEach((w, i) =>
      s.send(
        {
          type: 'conversation.item.input_audio_transcription.delta',
          item_id: item.id,
          content_index: 0,
          delta: i ? ` ${w}` : w,
        },
        d.latency.finalMs,
      ),
    );
    s.send(
      {
        type: 'conversation.item.input_audio_transcription.completed',
        item_id: item.id,
        content_index: 0,
        transcript: u.words.join(' '),
      },
      d.latency.finalMs,
    );
  };
  return startLiveDouble(
    {
      path: '/v1/realtime',
      refuse(query, headers, key) {
        if (headers.authorization !== `Bearer ${key}`) return [401, 'Incorrect API key provided.'];
        if (query.get('intent') !== 'transcription') return [400, 'intent=transcription expected'];
        return null;
      },
      errorBody: (status, message) =>
        JSON.stringify({
          error: { message, type: 'invalid_request_error', code: status === 401 ? 'invalid_api_key' : null },
        }),
      encoding: () => 'linear16',
      sampleRate: () => 24000,
      endpointingS: () => 0.5,
      onOpen: (s) => s.send({ type: 'session.created', session: { type: 'transcription' } }, 0),
      onInterim(s, u) {
        const item = current(s);
        if (!item.started) {
          item.started = true;
          s.send(
            { type: 'input_audio_buffer.speech_started', audio_start_ms: Math.round(u.start * 1000), item_id: item.id },
            d.latency.interimMs,
          );
        }
      },
      onFinal: (s, u) => transcribe(s, u),
      onControl(s, type, msg) {
        if (type === 'session.update') {
          const session = msg.session as {
            type?: string;
            audio?: { input?: { format?: { type?: string; rate?: number } } };
          };
          sessions.push(session);
          const fmt = session.audio?.input?.format;
          if (session.type !== 'transcription' || !fmt || (fmt.type === 'audio/pcm' && fmt.rate !== 24000)) {
            s.send(
              {
                type: 'error',
                error: { type: 'invalid_request_error', code: 'invalid_value', message: 'bad session' },
              },
              0,
            );
            return;
          }
          s.setFormat(fmt.type === 'audio/pcmu' ? 'mulaw' : 'linear16', fmt.type === 'audio/pcmu' ? 8000 : 24000);
          s.send({ type: 'session.updated', session }, 0);
        }
        if (type === 'input_audio_buffer.append' && typeof msg.audio === 'string')
          s.audio(Buffer.from(msg.audio, 'base64'));
        if (type === 'input_audio_buffer.commit') {
          const u = s.flush();
          if (u) transcribe(s, u);
          else
            s.send(
              {
                type: 'error',
                error: {
                  type: 'invalid_request_error',
                  code: 'input_audio_buffer_commit_empty',
                  message: 'buffer too small',
                },
              },
              0,
            );
        }
      },
    },
    { latency: opts.latency ?? FAST, script: opts.script, key: opts.key ?? 'test-key-openai' },
  ).then((double) => Object.assign((d = double), { sessions }));
}
