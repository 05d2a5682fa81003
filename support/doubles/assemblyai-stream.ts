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
 * AssemblyAI Universal-Streaming v3 double: `/v3/ws?sample_rate&encoding=pcm_s16le|pcm_mulaw&format_turns`, key
 * in `authorization` (refused: HTTP 401 `{error}`). Sends `Begin`, then `Turn` messages: unfinished turns carry
 * the words heard so far (`transcript` holds only final words), an end of turn comes unformatted and then (with
 * `format_turns=true`) formatted; `ForceEndpoint` ends the turn; `Terminate` flushes, sends `Termination` and
 * closes 1000. Times in milliseconds; latency from a declared profile.
 */
export function startAssemblyAiStreamDouble(
  opts: { latency?: LatencyProfile; script?: string[]; key?: string } = {},
): Promise<LiveDouble> {
  let d: LiveDouble;
  let turnOrder = 0;
  const ms = (s: number) => Math.round(s * 1000);
  const turn = (u: Utterance, words: string[], endOfTurn: boolean, formatted: boolean) => ({
    type: 'Turn',
    turn_order: turnOrder,
    turn_is_formatted: formatted,
    end_of_turn: endOfTurn,
    transcript: endOfTurn
      ? formatted
        ? words.join(' ')
        : words
            .join(' ')
            .toLowerCase()
            .replace(/[^\w\s']/g, '')
      : '',
    end_of_turn_confidence: endOfTurn ? 0.9 : 0.1,
    words: timedWords(u, words).map((w) => ({
      start: ms(w.start),
      end: ms(w.end),
      text: w.word,
      confidence: 0.97,
      word_is_final: endOfTurn,
    })),
  });
  const endTurn = (s: Session, u: Utterance | null) => {
    if (!u) return;
    s.send(turn(u, u.words, true, false), d.latency.finalMs);
    if (s.conn.query.get('format_turns') === 'true') s.send(turn(u, u.words, true, true), d.latency.finalMs);
    turnOrder++;
  };
  return startLiveDouble(
    {
      path: '/v3/ws',
      refuse(query, headers, key) {
        if (headers.authorization !== key) return [401, 'Invalid API key'];
        if (!(Number(query.get('sample_rate')) > 0)) return [400, 'sample_rate is required'];
        return null;
      },
      errorBody: (_status, message) => JSON.stringify({ error: message }),
      encoding: (q) => (q.get('encoding') === 'pcm_mulaw' ? 'mulaw' : 'linear16'),
      sampleRate: (q) => Number(q.get('sample_rate')),
      endpointingS: (q) => Number(q.get('min_end_of_turn_silence_when_confident') ?? 400) / 1000,
      onAudioMessage(s, bytes) {
        // The real service closes 3007 on audio messages outside 50-1000 ms.
        const ms =
          (bytes / (s.conn.query.get('encoding') === 'pcm_mulaw' ? 1 : 2) / Number(s.conn.query.get('sample_rate'))) *
          1000;
        if (ms < 50 || ms > 1000) s.close(3007, `Input duration violation: ${ms.toFixed(0)} ms`);
      },
      onOpen: (s) => s.send({ type: 'Begin', id: randomUUID(), expires_at: Math.floor(Date.now() / 1000) + 3600 }, 0),
      onInterim: (s, u) => s.send(turn(u, u.words.slice(0, u.interims), false, false), d.latency.interimMs),
      onFinal: (s, u) => endTurn(s, u),
      onControl(s, type) {
        if (type === 'ForceEndpoint') endTurn(s, s.flush());
        if (type === 'Terminate') {
          endTurn(s, s.flush());
          s.send(
            { type: 'Termination', audio_duration_seconds: Math.round(s.audioSeconds()), session_duration_seconds: 1 },
            d.latency.finalMs,
          );
          s.closeAfterQueued(1000);
        }
      },
    },
    { latency: opts.latency ?? FAST, script: opts.script, key: opts.key ?? 'test-key-assemblyai' },
  ).then((double) => (d = double));
}
