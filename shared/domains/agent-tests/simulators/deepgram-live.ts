import {
  FAST,
  startLiveDouble,
  timedWords,
  type LatencyProfile,
  type LiveDouble,
  type Script,
  type Session,
  type Utterance,
} from './live-double.ts';
import { PACED, pacedEar, type Hypothesis, type PacedEar, type PacedProfile } from './paced-speech.ts';

/**
 * Deepgram live transcription double, the one double of its protocol: the `/v1/listen` WebSocket as Deepgram speaks
 * it. Auth `Authorization: Token <key>` (a refused handshake answers the HTTP status with `{err_code, err_msg}`);
 * raw audio needs `encoding` (linear16|mulaw) and `sample_rate`. Interim `Results` (`is_final: false`, with
 * `interim_results=true`) while speech goes on, a final (`is_final`, `speech_final`) per utterance with its
 * `start`/`duration` and timed words; `Finalize` flushes (`from_finalize`), `CloseStream` flushes, sends `Metadata`
 * and closes 1000; `KeepAlive` is recorded.
 *
 * Two speech models, because two kinds of test time it differently:
 * - `paced` (the default; paced-speech.ts): on the audio clock, final `finalAfterMs` after the end of speech, scripts
 *   with ` | ` pauses. Realtime session tests and the voice-latency benchmark, whose figures depend on it. What a
 *   hosted STT does on a real network is opt-in there: final jitter, a word error rate (seeded) and interims that
 *   lag and change (`finalJitterMs`, `wordErrorRate`, `seed`, `interimLagMs`; stt-realism.ts).
 * - `endpointing` (live-double.ts's): final after the `endpointing` silence the client asked for, every message
 *   delayed by a declared `latency` profile. The STT adapter tests, as for the other vendors' live doubles.
 */

export type DeepgramLiveDouble = LiveDouble & {
  /** The paced model's word error rate from the next utterance on (agent-test scenarios set their own). */
  setWordErrorRate(rate: number): void;
  /** The paced model's line noise (RMS; 0 = a clean line) from the next audio on: speech is heard over it. */
  setLineNoise(rms: number): void;
  /** The paced model's final, ms of silence after the speech, from the next utterance on (a slow vendor's). */
  setFinalAfterMs(ms: number): void;
};
export type { LiveConnection } from './live-double.ts';

/** Roughly what Deepgram's hosted nova models show on a good link (endpointing model). */
export const DEEPGRAM_TYPICAL: LatencyProfile = {
  connectMs: 80,
  interimMs: 150,
  interimEveryMs: 250,
  finalMs: 120,
};

interface Common {
  key?: string;
  /**
   * Accept any key: the agent tests' simulated STT, which a platform may reach with a developer's own stored key
   * (it never leaves the process) as well as with the run's.
   */
  anyKey?: boolean;
  script?: Script;
}
export interface DeepgramPacedOptions extends Common, Partial<PacedProfile> {
  model?: 'paced';
}
export interface DeepgramEndpointingOptions extends Common {
  model: 'endpointing';
  latency?: LatencyProfile;
}
export type DeepgramLiveOptions = DeepgramPacedOptions | DeepgramEndpointingOptions;

function results(h: Hypothesis, isFinal: boolean, speechFinal: boolean, extra = {}) {
  return {
    type: 'Results',
    channel_index: [0, 1],
    duration: h.duration,
    start: h.start,
    is_final: isFinal,
    speech_final: speechFinal,
    channel: {
      alternatives: [
        {
          transcript: h.transcript,
          confidence: 0.98,
          words: h.words.map((w) => ({
            word: w.word.toLowerCase().replace(/[^\w']/g, ''),
            punctuated_word: w.word,
            start: w.start,
            end: w.end,
            confidence: 0.98,
          })),
        },
      ],
    },
    ...extra,
  };
}

/** The endpointing model's utterance as Deepgram reports it: ms-rounded, words spread over the whole utterance. */
function fromUtterance(u: Utterance, words: string[]): Hypothesis {
  return {
    transcript: words.join(' '),
    start: Number(u.start.toFixed(3)),
    duration: Number((u.last - u.start).toFixed(3)),
    words: timedWords(u, words),
  };
}

export function startDeepgramLiveDouble(opts: DeepgramLiveOptions = {}): Promise<DeepgramLiveDouble> {
  const ears = new WeakMap<Session, PacedEar>();
  // Each connection gets its own word errors and jitter from the profile's seed (pacedEar's seedOffset).
  let earCount = 0;
  const paced = opts.model === 'endpointing' ? null : { ...PACED, ...opts };
  // Only the endpointing model delays messages; the paced one answers in the tick the audio arrived.
  const latency = opts.model === 'endpointing' ? (opts.latency ?? FAST) : FAST;
  // The paced model's Results have never carried a `metadata` block: the benchmark's bytes stay what they were.
  const meta = paced ? {} : { metadata: { request_id: 'req-double', model_info: { name: 'double' } } };
  const interims = (s: Session) => s.conn.query.get('interim_results') === 'true';
  const final = (s: Session, h: Hypothesis | null, speechFinal: boolean, extra = {}) => {
    if (h) s.send(results(h, true, speechFinal, extra), latency.finalMs);
  };
  const flush = (s: Session) => {
    const ear = ears.get(s);
    if (ear) return ear.finish();
    const u = s.flush();
    return u && fromUtterance(u, u.words);
  };
  const setWordErrorRate = (rate: number) => {
    if (paced) paced.wordErrorRate = rate;
  };
  const setLineNoise = (rms: number) => {
    if (paced) paced.noiseRms = rms;
  };
  const setFinalAfterMs = (ms: number) => {
    if (paced) paced.finalAfterMs = ms;
  };
  return startLiveDouble(
    {
      path: '/v1/listen',
      refuse(query, headers, key) {
        if (!opts.anyKey && headers.authorization !== `Token ${key}`) return [401, 'Invalid credentials.'];
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
      listen: paced
        ? (s) => {
            const ear = pacedEar(
              paced,
              () => s.nextLine(),
              (h, isFinal) => {
                if (isFinal) final(s, h, true, meta);
                else if (interims(s)) s.send(results(h, false, false, meta), 0);
              },
              earCount++,
            );
            ears.set(s, ear);
            return ear.hear;
          }
        : undefined,
      onInterim(s, u) {
        // The hypothesis grows with the speech heard: one more word per interim.
        const words = u.words.slice(0, u.interims);
        if (interims(s)) s.send(results(fromUtterance(u, words), false, false, meta), latency.interimMs);
      },
      onFinal: (s, u) => final(s, fromUtterance(u, u.words), true, meta),
      onControl(s, type) {
        if (type === 'Finalize') final(s, flush(s), false, { ...meta, from_finalize: true });
        if (type === 'CloseStream') {
          final(s, flush(s), true, meta);
          const duration = Number(s.audioSeconds().toFixed(6)); // summed chunk lengths, without float noise
          s.send({ type: 'Metadata', request_id: 'req-double', duration, channels: 1 }, latency.finalMs);
          s.closeAfterQueued(1000);
        }
      },
    },
    { latency, script: opts.script, key: opts.key ?? 'test-key-deepgram' },
  ).then((d) => Object.assign(d, { setWordErrorRate, setLineNoise, setFinalAfterMs }));
}
