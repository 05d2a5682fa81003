/**
 * (c) The live recogniser as calls use it: the in-domain questions over a phone line (8 kHz μ-law, what Twilio
 * sends), into the local live STT (ps-stream workers) in 20 ms frames, with the general model and with the agent's.
 * Prints WER and the workers' CPU seconds per second of audio (the figure the admission default is set from).
 * Audio is fed as fast as the worker takes it (no wall-clock wait): the CPU per audio second is the same, and the
 * run takes minutes, not the length of the audio.
 */
import { readFileSync } from 'node:fs';
import { pcmToMulaw, mulawToPcm } from '../../shared/kernel/audio/mulaw.ts';
import { resamplePcm } from '../../shared/kernel/audio/resampler.ts';
import {
  DEFAULT_PS_STREAM_BIN,
  LIVE_DECODER_ARGS,
  LocalLiveSttEngine,
} from '../../shared/engines/stt/pocketsphinx-live.ts';
import type { LanguageModelFiles } from '../../shared/engines/stt/lm/language-models.ts';
import type { SttEngine } from '../../shared/engines/stt/types.ts';
import { countWordErrors } from '../../shared/kernel/text/word-errors.ts';

export interface StreamJob {
  agent: string;
  q: string;
  /** 16 kHz PCM of the question. */
  pcm: Buffer;
}

/** CPU seconds (user + system) of a process, from /proc/<pid>/stat; 0 once it has gone. */
function processCpu(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** 16 kHz PCM → what a phone call's STT stage gets: 8 kHz, through μ-law and back. */
export function overPhone(pcm16k: Buffer): Buffer {
  return mulawToPcm(pcmToMulaw(resamplePcm(pcm16k, 16000, 8000)));
}

const SILENCE_AFTER_MS = 400;

/** One question through one stream: the finals' words. */
async function hear(engine: LocalLiveSttEngine, pcm8k: Buffer, lm: LanguageModelFiles | undefined): Promise<string> {
  const stream = engine.stream({ sampleRate: 8000, language: 'en', ...(lm ? { languageModel: lm } : {}) });
  const texts: string[] = [];
  const done = (async () => {
    for await (const ev of stream.events) if (ev.type === 'final') texts.push(ev.text);
  })();
  const audio = Buffer.concat([pcm8k, Buffer.alloc(SILENCE_AFTER_MS * 16)]);
  for (let at = 0; at < audio.length; at += 320) stream.write(audio.subarray(at, at + 320));
  stream.end();
  await done;
  stream.close();
  return texts.join(' ');
}

export interface StreamFigures {
  wer: number;
  /** Workers' CPU seconds per second of audio fed (speech and the silence after it). */
  cpuPerAudioSecond: number;
  audioSeconds: number;
}

/**
 * Every job through one worker, with the general model or the job's agent model. The worker's decoders load
 * before the timing starts (one warm-up question per model), as they stay loaded on a running platform.
 */
export async function streamFigures(
  batch: SttEngine,
  jobs: StreamJob[],
  models: Record<string, LanguageModelFiles> | null,
  decoderArgs: readonly string[] = LIVE_DECODER_ARGS,
): Promise<StreamFigures> {
  const engine = new LocalLiveSttEngine(batch, {
    bin: process.env.PS_STREAM_BIN ?? DEFAULT_PS_STREAM_BIN,
    workers: 1,
    decoderArgs,
  });
  try {
    const phone = jobs.map((j) => ({ ...j, pcm8k: overPhone(j.pcm) }));
    const lmOf = (agent: string) => (models ? models[agent] : undefined);
    for (const agent of new Set(jobs.map((j) => j.agent))) await hear(engine, phone[0]!.pcm8k, lmOf(agent));
    const pid = engine.pool.pids[0]!;
    const cpu0 = processCpu(pid);
    let errors = 0;
    let words = 0;
    let samples = 0;
    for (const j of phone) {
      const e = countWordErrors(j.q, await hear(engine, j.pcm8k, lmOf(j.agent)));
      errors += e.errors;
      words += e.words;
      samples += j.pcm8k.length / 2 + SILENCE_AFTER_MS * 8;
    }
    const audioSeconds = samples / 8000;
    return { wer: errors / words, cpuPerAudioSecond: (processCpu(pid) - cpu0) / audioSeconds, audioSeconds };
  } finally {
    engine.close();
  }
}
