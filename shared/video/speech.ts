import { writeFile } from 'node:fs/promises';
import { collect } from '../audio/pcm.ts';
import { encodeWav } from '../audio/wav.ts';
import { ApiError } from '../errors/api-error.ts';
import { PocketsphinxSttEngine } from '../engines/stt/pocketsphinx.ts';
import type { SttEngine, TranscriptionResult } from '../engines/stt/types.ts';
import { LocalTtsEngine } from '../engines/tts/local.ts';
import type { TtsEngine } from '../engines/tts/types.ts';
import { decodeMono16k } from '../engines/face/visemes.ts';

/**
 * The speech engines the video jobs use. Today: the local `default` engines of the speech area (flite/espeak-ng,
 * pocketsphinx); other tts/stt providers are refused at submission with provider_unavailable until the
 * speech registry (`speechEngines(infra)`) is wired in here — one function to change.
 */
let tts: LocalTtsEngine | null = null;
let stt: PocketsphinxSttEngine | null = null;

export function videoTts(provider: string): TtsEngine {
  if (provider !== 'default') {
    throw new ApiError(
      'provider_unavailable',
      { provider, detail: 'video jobs synthesize with the default TTS engine in this build' },
      'tts_provider',
    );
  }
  tts ??= new LocalTtsEngine();
  return tts;
}

export function videoStt(): SttEngine {
  stt ??= new PocketsphinxSttEngine();
  return stt;
}

/** The voice used when none is given: English → the default voice; other languages → espeak-ng's voice for it. */
export function voiceFor(voiceId: string | undefined, language: string | undefined): string {
  if (voiceId && voiceId !== 'default') return voiceId;
  const lang = (language ?? 'en').toLowerCase().split('-')[0]!;
  return lang === 'en' ? 'default' : `espeak-${lang}`;
}

/** Synthesizes text to a mono WAV file; returns its duration in seconds. */
export async function synthesizeToWav(
  provider: string,
  input: { text: string; voiceId: string; language?: string; speed?: number },
  path: string,
  signal: AbortSignal,
): Promise<number> {
  const audio = await videoTts(provider).synthesize({
    text: input.text,
    voiceId: input.voiceId,
    speed: input.speed ?? 1,
    pitch: 1,
    language: input.language,
    signal,
  });
  const pcm = await collect(audio.chunks);
  await writeFile(path, encodeWav(pcm, audio.sampleRate));
  return pcm.length / 2 / audio.sampleRate;
}

/** Transcribes the audio of a media file (16 kHz mono) with segment timestamps. */
export async function transcribeFile(
  path: string,
  language: string,
  signal: AbortSignal,
): Promise<TranscriptionResult> {
  const samples = await decodeMono16k(path, signal);
  const pcm = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  return videoStt().transcribe({
    pcm,
    sampleRate: 16_000,
    language,
    mode: 'fast',
    timestamps: 'segment',
    diarize: false,
    signal,
  });
}
