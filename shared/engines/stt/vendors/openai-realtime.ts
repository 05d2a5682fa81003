import { Resampler } from '../../../kernel/audio/resampler.ts';
import { EngineError } from '../../../kernel/errors/engine-error.ts';
import type { SttStreamOptions } from '../types.ts';
import { LiveSocketStream } from './live-socket.ts';

/** Live options: the interface's, plus μ-law pass-through for 8 kHz phone audio (`audio/pcmu`). */
export interface OpenAiRealtimeStreamOptions extends SttStreamOptions {
  encoding?: 'pcm16' | 'mulaw';
}

/** The Realtime API takes PCM only at 24 kHz. */
const PCM_RATE = 24000;
/** After end(): how long the server must stay quiet, with no turn pending, before the socket is closed. */
const SETTLE_MS = 300;

interface RealtimeEvent {
  type?: string;
  item_id?: string;
  delta?: string;
  transcript?: string;
  audio_start_ms?: number;
  audio_end_ms?: number;
  error?: { type?: string; code?: string; message?: string };
}

/**
 * OpenAI Realtime transcription session (`wss://…/v1/realtime?intent=transcription`, Bearer): a `session.update`
 * of type `transcription` (format, model, language, server VAD) goes first; audio is appended as base64
 * `input_audio_buffer.append` (PCM resampled to 24 kHz, or μ-law as is); the server's VAD commits each turn,
 * `…input_audio_transcription.delta` events become partials and `.completed` a final timed by the turn's
 * `speech_started`/`speech_stopped`. `end()` commits what is left and closes once a commit was answered, every
 * committed turn is transcribed and the server has been quiet for 300 ms (the server never closes the socket
 * itself, and a VAD commit cannot be told from ours); a 15 s backstop closes anyway.
 */
export function openAiRealtimeStream(
  baseUrl: string,
  key: string,
  model: string,
  opts: OpenAiRealtimeStreamOptions,
): LiveSocketStream {
  const mulaw = opts.encoding === 'mulaw';
  const resampler = !mulaw && opts.sampleRate !== PCM_RATE ? new Resampler(opts.sampleRate, PCM_RATE) : null;
  const timing = new Map<string, { start?: number; end?: number }>();
  const text = new Map<string, string>();
  const pending = new Set<string>();
  let appended = false;
  let ending = false;
  /** After end(): a commit was answered (committed, or commit_empty when the VAD had taken everything). */
  let answered = false;
  let endTimer: NodeJS.Timeout | undefined;
  let settleTimer: NodeJS.Timeout | undefined;

  const transcription: Record<string, unknown> = { model };
  if (opts.language) transcription.language = opts.language.slice(0, 2);
  const session = {
    type: 'session.update',
    session: {
      type: 'transcription',
      audio: {
        input: {
          format: mulaw ? { type: 'audio/pcmu' } : { type: 'audio/pcm', rate: PCM_RATE },
          transcription,
          turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 },
        },
      },
    },
  };
  const append = (audio: Buffer) => {
    appended = true;
    return JSON.stringify({ type: 'input_audio_buffer.append', audio: audio.toString('base64') });
  };

  return new LiveSocketStream(
    {
      provider: 'openai',
      url: `${baseUrl.replace(/^http/, 'ws')}/realtime?intent=transcription`,
      headers: { authorization: `Bearer ${key}` },
      openMessages: [JSON.stringify(session)],
      encodeAudio(pcm) {
        const out = resampler ? resampler.processPcm(pcm) : pcm;
        return out.length ? [append(out)] : [];
      },
      onEnd(ctl) {
        ending = true;
        const tail = resampler?.flushPcm();
        if (tail?.length) ctl.send(append(tail));
        if (!appended) return ctl.close();
        ctl.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
        // A turn that never completes must not hold the stream open forever.
        endTimer = setTimeout(() => ctl.close(), 15_000);
        endTimer.unref();
      },
      onText(frame, emit, ctl) {
        const ev = JSON.parse(frame) as RealtimeEvent;
        const id = ev.item_id ?? '';
        // A VAD commit and ours look alike, so close once nothing is pending and the server has been quiet a moment.
        const finishIfDone = () => {
          clearTimeout(settleTimer);
          if (ending && answered && pending.size === 0) {
            settleTimer = setTimeout(() => {
              clearTimeout(endTimer);
              ctl.close();
            }, SETTLE_MS);
          }
        };
        if (ending) clearTimeout(settleTimer);
        switch (ev.type) {
          case 'input_audio_buffer.speech_started':
            timing.set(id, { start: (ev.audio_start_ms ?? 0) / 1000 });
            break;
          case 'input_audio_buffer.speech_stopped':
            timing.set(id, { ...timing.get(id), end: (ev.audio_end_ms ?? 0) / 1000 });
            break;
          case 'input_audio_buffer.committed':
            if (ending) answered = true;
            pending.add(id);
            break;
          case 'conversation.item.input_audio_transcription.delta': {
            const sofar = (text.get(id) ?? '') + (ev.delta ?? '');
            text.set(id, sofar);
            if (sofar.trim()) emit({ type: 'partial', text: sofar.trim() });
            break;
          }
          case 'conversation.item.input_audio_transcription.completed': {
            pending.delete(id);
            const t = timing.get(id) ?? {};
            const final = (ev.transcript ?? text.get(id) ?? '').trim();
            if (final) emit({ type: 'final', text: final, start: t.start ?? 0, end: t.end ?? t.start ?? 0 });
            timing.delete(id);
            text.delete(id);
            finishIfDone();
            break;
          }
          case 'conversation.item.input_audio_transcription.failed':
            pending.delete(id);
            finishIfDone();
            break;
          case 'error': {
            const code = ev.error?.code ?? '';
            if (code === 'input_audio_buffer_commit_empty') {
              answered = true; // the server's VAD had committed everything already
              finishIfDone();
              break;
            }
            const kind = /api_key|auth/i.test(code)
              ? 'auth'
              : ev.error?.type === 'server_error'
                ? 'upstream'
                : 'bad_request';
            ctl.fail(
              new EngineError('openai', kind, `openai realtime: ${ev.error?.message ?? code}`, kind === 'upstream'),
            );
            break;
          }
        }
      },
      closeError: (code, reason) =>
        new EngineError(
          'openai',
          code === 1008 ? 'bad_request' : 'upstream',
          `openai realtime: ${reason || `socket closed (${code})`}`,
          code !== 1008,
        ),
    },
    opts.signal,
  );
}
