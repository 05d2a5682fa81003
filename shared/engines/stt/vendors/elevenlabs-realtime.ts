import { EngineError } from '../../../kernel/errors/engine-error.ts';
import type { SttStreamOptions, TranscriptWord } from '../types.ts';
import { LiveSocketStream } from './live-socket.ts';

/** Live options: the interface's, plus μ-law pass-through for 8 kHz phone audio (`ulaw_8000`). */
export interface ElevenLabsRealtimeStreamOptions extends SttStreamOptions {
  encoding?: 'pcm' | 'mulaw';
}

/** PCM rates Scribe realtime takes as `pcm_<rate>`. */
const PCM_RATES = [8000, 16000, 22050, 24000, 44100, 48000];
/** After end(): how long the server must stay quiet before the socket is closed (it never closes it itself). */
const SETTLE_MS = 500;

interface ScribeMessage {
  message_type?: string;
  text?: string;
  error?: string;
  words?: { text: string; start: number; end: number; type?: string }[];
}

/**
 * ElevenLabs Scribe realtime (`wss://…/v1/speech-to-text/realtime?model_id&audio_format&commit_strategy=vad
 * &include_timestamps=true`, `xi-api-key`): audio as base64 `input_audio_chunk` messages; `partial_transcript` →
 * partial, `committed_transcript_with_timestamps` → final with word times. `end()` sends a committing chunk and
 * closes once the server has been quiet for 500 ms. `auth_error` → permanent auth; rate/quota errors retryable.
 */
export function elevenLabsRealtimeStream(
  baseUrl: string,
  key: string,
  model: string,
  opts: ElevenLabsRealtimeStreamOptions,
): LiveSocketStream {
  const mulaw = opts.encoding === 'mulaw';
  if (mulaw ? opts.sampleRate !== 8000 : !PCM_RATES.includes(opts.sampleRate)) {
    throw new EngineError(
      'elevenlabs',
      'bad_request',
      `elevenlabs realtime takes no ${opts.sampleRate} Hz audio`,
      false,
    );
  }
  const q = new URLSearchParams({
    model_id: model,
    audio_format: mulaw ? 'ulaw_8000' : `pcm_${opts.sampleRate}`,
    commit_strategy: 'vad',
    include_timestamps: 'true',
  });
  if (opts.language) q.set('language_code', opts.language);
  const chunk = (audio: Buffer, commit: boolean) =>
    JSON.stringify({
      message_type: 'input_audio_chunk',
      audio_base_64: audio.toString('base64'),
      commit,
      sample_rate: opts.sampleRate,
    });
  let ending = false;
  let settle: NodeJS.Timeout | undefined;
  let backstop: NodeJS.Timeout | undefined;
  const quietThenClose = (close: () => void) => {
    clearTimeout(settle);
    settle = setTimeout(() => {
      clearTimeout(backstop);
      close();
    }, SETTLE_MS);
  };

  return new LiveSocketStream(
    {
      provider: 'elevenlabs',
      url: `${baseUrl.replace(/^http/, 'ws')}/v1/speech-to-text/realtime?${q}`,
      headers: { 'xi-api-key': key },
      encodeAudio: (audio) => [chunk(audio, false)],
      onEnd(ctl) {
        ending = true;
        ctl.send(chunk(Buffer.alloc(0), true));
        quietThenClose(() => ctl.close());
        backstop = setTimeout(() => ctl.close(), 15_000);
        backstop.unref();
      },
      onText(frame, emit, ctl) {
        const m = JSON.parse(frame) as ScribeMessage;
        if (ending) quietThenClose(() => ctl.close());
        const type = m.message_type ?? '';
        if (type === 'partial_transcript') {
          if (m.text?.trim()) emit({ type: 'partial', text: m.text.trim() });
        } else if (type === 'committed_transcript_with_timestamps') {
          const words: TranscriptWord[] = (m.words ?? [])
            .filter((w) => (w.type ?? 'word') === 'word')
            .map((w) => ({ word: w.text.trim(), start: w.start, end: w.end }));
          const text = (m.text ?? '').trim();
          if (text) emit({ type: 'final', text, start: words[0]?.start ?? 0, end: words.at(-1)?.end ?? 0, words });
        } else if (/error/.test(type)) {
          const retryable = /rate_limit|quota|resource_exhausted|queue_overflow|transcriber/.test(type);
          const kind = type === 'auth_error' ? 'auth' : retryable ? 'rate_limited' : 'bad_request';
          ctl.fail(new EngineError('elevenlabs', kind, `elevenlabs realtime ${type}: ${m.error ?? ''}`, retryable));
        }
      },
      closeError: (code, reason) =>
        new EngineError(
          'elevenlabs',
          code === 1008 ? 'bad_request' : 'upstream',
          `elevenlabs realtime: ${reason || `socket closed (${code})`}`,
          code !== 1008,
        ),
    },
    opts.signal,
  );
}
