import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { encodeWav } from '../../../kernel/audio/wav.ts';
import type { DubVideoBody } from '../../../contracts/video.ts';
import type { Infra } from '../../../platform/infra.ts';
import { ffmpeg } from '../../../kernel/media/ffmpeg.ts';
import { fetchInput } from '../inputs.ts';
import type { JobOutcome, StepContext } from '../lifecycle.ts';
import { probeMedia } from '../../../kernel/media/probe.ts';
import { speakableText } from '../../../engines/tts/speakable.ts';
import { synthesizeToWav, transcribeMedia, voiceFor } from '../speech.ts';
import { mergeState } from '../store.ts';
import { dubSttLanguage, dubSttProvider, dubTranslator, translationFailure } from '../dub-languages.ts';
import { lipsyncFiles } from './lipsync.ts';
import { storeOutput, storeWork } from './outputs.ts';

interface Segment {
  start: number;
  end: number;
  text: string;
}
interface DubState {
  transcript?: { language: string; duration: number; segments: Segment[] };
  translation?: Segment[];
  dub_audio_key?: string;
  lipsync_key?: string;
}

const RATE = 22_050;
const req = (s: StepContext) => s.job.request as unknown as DubVideoBody;
const state = (s: StepContext) => s.job.state as DubState;

async function download(infra: Infra, key: string, path: string, signal: AbortSignal): Promise<string> {
  const { body } = await infra.storage.getStream(key);
  await pipeline(body, createWriteStream(path), { signal });
  return path;
}

/**
 * Step 1 (CPU): fetch the video into S3 and transcribe its audio with segment timings, on the job's STT engine
 * (the speech domain's media transcription); the source language is the caller's or the one the engine detected.
 */
export async function dubTranscribe(infra: Infra, s: StepContext): Promise<void> {
  if (state(s).transcript) return;
  const video = await fetchInput(infra, s.job, 'video_url', req(s).video_url, 'video', s.workDir, s.signal);
  await s.progress(0.2);
  const language = dubSttLanguage(req(s));
  const provider = dubSttProvider(req(s));
  const t = video.info.audio
    ? await transcribeMedia(infra, { job: s.job, provider, language, path: video.path }, s.signal)
    : null;
  // The language the STT heard (a vendor's detection when source_language was omitted) drives the translation.
  const heard = t?.language || language || 'en';
  const unreachable = await translationFailure(infra, req(s), heard, s.job.owner_id, {});
  if (unreachable) throw unreachable;
  const segments = (t?.segments ?? [])
    .filter((x) => x.text.trim())
    .map(({ start, end, text }) => ({ start, end, text }));
  await mergeState(infra.db, s.job.id, {
    transcript: {
      language: heard,
      duration: video.info.durationSeconds,
      segments,
    },
  });
}

/**
 * Step 2 (CPU): translate each segment, keeping its timing: Apertium (pivoting where no direct pair exists) or
 * DeepL (`translate_provider`; `auto` takes DeepL only where Apertium has no route and a DeepL key resolves).
 */
export async function dubTranslate(infra: Infra, s: StepContext): Promise<void> {
  if (state(s).translation) return;
  const t = state(s).transcript!;
  const translator = await dubTranslator(infra, req(s), t.language, s.job.owner_id, {});
  if (!translator) throw (await translationFailure(infra, req(s), t.language, s.job.owner_id, {}))!;
  const texts = await translator.engine.translate({
    texts: t.segments.map((x) => x.text),
    source: t.language,
    target: req(s).target_language,
    apiKey: translator.apiKey,
    signal: s.signal,
  });
  await mergeState(infra.db, s.job.id, {
    translation: t.segments.map((seg, i) => ({ ...seg, text: texts[i] ?? seg.text })),
  });
}

/**
 * Step 3 (CPU): synthesize each translated segment and fit it to its time slot (from its start to the next
 * segment's start): speech longer than the slot is sped up with ffmpeg `atempo` (up to 2×, then cut), shorter
 * speech is left at its natural pace. The pieces are laid on one track as long as the video.
 */
export async function dubSynthesize(infra: Infra, s: StepContext): Promise<void> {
  if (state(s).dub_audio_key) return;
  const { duration } = state(s).transcript!;
  const segs = state(s).translation!;
  const track = new Int16Array(Math.ceil(duration * RATE));
  const voice = await voiceFor(infra, req(s).tts_provider, req(s).voice_id, req(s).target_language);
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const slotEnd = Math.min(duration, segs[i + 1]?.start ?? duration);
    const slot = Math.max(0.2, slotEnd - seg.start);
    const raw = `${s.workDir}/seg${i}.wav`;
    const natural = await synthesizeToWav(
      infra,
      { provider: req(s).tts_provider, job: s.job },
      // Machine text (a translation): a word too long to speak is cut short rather than failing the job.
      { text: speakableText(seg.text), ...voice, language: req(s).target_language },
      raw,
      s.signal,
    );
    const tempo = Math.min(2, Math.max(1, natural / slot));
    const pcm = await ffmpeg(
      ['-i', raw, '-af', `atempo=${tempo.toFixed(4)}`, '-ac', '1', '-ar', String(RATE), '-f', 's16le', '-'],
      { signal: s.signal },
    );
    const samples = new Int16Array(pcm.buffer, pcm.byteOffset, Math.floor(pcm.length / 2));
    const at = Math.round(seg.start * RATE);
    const room = Math.min(samples.length, Math.round(slot * RATE), track.length - at);
    if (room > 0) track.set(samples.subarray(0, room), at);
    await s.progress((i + 1) / segs.length);
  }
  const path = `${s.workDir}/dub.wav`;
  await writeFile(path, encodeWav(Buffer.from(track.buffer), RATE));
  const key = await storeWork(infra, s, path, 'dub.wav', 'audio/wav');
  await mergeState(infra.db, s.job.id, { dub_audio_key: key });
}

/** Step 4 (GPU lip-sync pool): re-lipsync the video to the dubbed track with lipsync_provider. */
export async function dubLipsync(infra: Infra, s: StepContext): Promise<void> {
  if (state(s).lipsync_key) return;
  const video = await fetchInput(infra, s.job, 'video_url', req(s).video_url, 'video', s.workDir, s.signal);
  const audioKey = state(s).dub_audio_key!;
  const audioPath = await download(infra, audioKey, `${s.workDir}/dub.wav`, s.signal);
  const outPath = `${s.workDir}/lipsync.mp4`;
  await lipsyncFiles(
    infra,
    s,
    req(s).lipsync_provider,
    { videoPath: video.path, videoKey: video.key, audioPath, audioKey },
    outPath,
    [0, 1],
  );
  const key = await storeWork(infra, s, outPath, 'lipsync.mp4', 'video/mp4');
  await mergeState(infra.db, s.job.id, { lipsync_key: key });
}

/** Step 5 (CPU, the flow's parent): final mux of the lip-synced picture with the dubbed track. */
export async function dubMux(infra: Infra, s: StepContext): Promise<JobOutcome> {
  const st = state(s);
  const videoPath = await download(infra, st.lipsync_key!, `${s.workDir}/lipsync.mp4`, s.signal);
  const audioPath = await download(infra, st.dub_audio_key!, `${s.workDir}/dub.wav`, s.signal);
  const outPath = `${s.workDir}/dubbed.mp4`;
  await ffmpeg(
    [
      '-i',
      videoPath,
      '-i',
      audioPath,
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c:v',
      'copy',
      '-c:a',
      'aac',
      '-b:a',
      '96k',
      '-af',
      'apad',
      '-shortest',
      '-movflags',
      '+faststart',
      outPath,
    ],
    { signal: s.signal },
  );
  const out = await probeMedia(outPath, s.signal);
  const key = await storeOutput(infra, s, outPath, 'dubbed.mp4');
  return {
    result: {
      video_key: key,
      duration_seconds: out.durationSeconds,
      width: out.video?.width ?? 0,
      height: out.video?.height ?? 0,
      provider: `default:dub(${s.job.request.lipsync_provider ?? 'default'} lipsync)`,
      source_language: st.transcript?.language,
      target_language: req(s).target_language,
      segments: st.translation,
    },
    units: out.durationSeconds,
  };
}
