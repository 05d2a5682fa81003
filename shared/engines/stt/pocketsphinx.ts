import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pcmToInt16 } from '../../audio/pcm.ts';
import { runProcess } from '../../audio/process.ts';
import { resamplePcm } from '../../audio/resampler.ts';
import { ApiError } from '../../errors/api-error.ts';
import { EngineError } from '../core/engine-error.ts';
import { diarize } from './diarize.ts';
import {
  SttEngine,
  type SttCapabilities,
  type SttRequest,
  type TranscriptSegment,
  type TranscriptWord,
  type TranscriptionResult,
} from './types.ts';

export interface PocketsphinxOptions {
  /** Folder with the acoustic model (`en-us/`), `en-us.lm.bin` and `cmudict-en-us.dict` (Debian pocketsphinx-en-us). */
  modelDir?: string;
  bin?: string;
  /** Decoders running at once in this process (each is single-threaded); others wait. Default: the core count. */
  maxConcurrent?: number;
}

/** A counting semaphore: more decoders than cores only makes every one of them slower. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(n: number) {
    this.free = Math.max(1, n);
  }
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.free > 0) this.free--;
    else {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener('abort', abort);
          resolve();
        };
        const abort = () => {
          const i = this.waiting.indexOf(go);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal!.reason);
        };
        signal?.addEventListener('abort', abort, { once: true });
        this.waiting.push(go);
      });
    }
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

const SCRATCH_DIR = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/**
 * Decoder settings per mode. `accurate` is pocketsphinx's own default search (wide beams, forward-flat second
 * pass and best-path lattice rescoring). `fast` narrows the beams, caps active HMMs/words per frame, uses the
 * phonetic-loop look-ahead and skips both extra passes: about twice as fast, a few points more WER.
 */
export const DECODER_SETTINGS: Record<SttRequest['mode'], string[]> = {
  accurate: ['-beam', '1e-48', '-wbeam', '7e-29', '-pbeam', '1e-48', '-fwdflat', 'yes', '-bestpath', 'yes'],
  fast: [
    ...['-beam', '1e-35', '-wbeam', '1e-25', '-pbeam', '1e-35', '-maxhmmpf', '3000', '-maxwpf', '10'],
    ...['-fwdflat', 'no', '-bestpath', 'no', '-pl_window', '5', '-topn', '2'],
  ],
};

/** Tokens pocketsphinx emits for silence, sentence bounds and noise: never words of the transcript. */
const NON_WORD = /^(<s>|<\/s>|<sil>|\[[A-Z_]+\]|\+\+.*\+\+|\+.*\+)$/;

/** Language codes the English model serves. */
export function isEnglish(language: string): boolean {
  return language === '' || /^en([-_][a-z]{2,3})?$/i.test(language);
}

/**
 * The `default` STT engine: CMU pocketsphinx (Debian 12 ships 5prealpha: `pocketsphinx_continuous`), US-English
 * 16 kHz acoustic model, 3-gram language model and CMU dictionary. The audio goes to the decoder as raw PCM; its
 * own endpointer splits utterances (segments) and `-time yes` prints word timings (seconds from the start of the
 * input) after each hypothesis. Diarization clusters per-segment voice features (./diarize.ts).
 */
export class PocketsphinxSttEngine extends SttEngine {
  readonly provider = 'default';
  readonly label = 'pocketsphinx.stt';
  readonly capabilities: SttCapabilities = {
    streaming: false,
    diarization: true,
    wordTimestamps: true,
    sampleRates: [16000],
    languages: ['en'],
    requiresKey: false,
  };
  private readonly modelDir: string;
  private readonly bin: string;
  private readonly slots: Slots;

  constructor(opts: PocketsphinxOptions = {}) {
    super();
    this.modelDir = opts.modelDir ?? '/usr/share/pocketsphinx/model/en-us';
    this.bin = opts.bin ?? 'pocketsphinx_continuous';
    this.slots = new Slots(opts.maxConcurrent ?? availableParallelism());
  }

  protected async _transcribe(req: SttRequest): Promise<TranscriptionResult> {
    if (!isEnglish(req.language)) {
      throw new ApiError(
        'unsupported_language',
        {
          detail: `language "${req.language}" is not supported by the default engine (${this.label}: English only); leave language empty, send "en", or pick a provider that supports it`,
        },
        'language',
      );
    }
    const pcm = resamplePcm(req.pcm, req.sampleRate, 16000);
    const duration = pcm.length / 2 / 16000;
    const segments =
      duration > 0.05 ? await this.slots.run(() => this.decode(pcm, req.mode, req.signal), req.signal) : [];
    if (req.diarize && segments.length > 0) {
      const labels = diarize(pcmToInt16(pcm), 16000, segments);
      segments.forEach((s, i) => (s.speaker = labels[i]));
    }
    const words = segments.flatMap((s) => s.words);
    return {
      text: segments.map((s) => s.text).join(' '),
      segments: segments.map(({ words: _w, ...seg }) => seg),
      ...(req.timestamps === 'word' ? { words } : {}),
      language: 'en',
      duration: round(duration),
    };
  }

  private async decode(pcm: Buffer, mode: SttRequest['mode'], signal?: AbortSignal) {
    // pocketsphinx_continuous reads a file (it cannot open Node's socket stdio): raw PCM in memory-backed /dev/shm.
    const file = join(SCRATCH_DIR, `vap-ps-${randomBytes(8).toString('hex')}.raw`);
    await writeFile(file, pcm);
    try {
      const args = [
        ...['-hmm', join(this.modelDir, 'en-us'), '-lm', join(this.modelDir, 'en-us.lm.bin')],
        ...['-dict', join(this.modelDir, 'cmudict-en-us.dict'), '-samprate', '16000'],
        ...['-infile', file, '-time', 'yes', '-logfn', '/dev/null'],
        ...DECODER_SETTINGS[mode],
      ];
      const r = await runProcess(this.bin, args, { signal }).catch((e: Error & { code?: string }) => {
        if (signal?.aborted) throw e;
        throw new EngineError(
          this.provider,
          'unavailable',
          `pocketsphinx could not start: ${e.code ?? e.message}`,
          false,
        );
      });
      if (r.code !== 0) {
        throw new EngineError(
          this.provider,
          'upstream',
          `pocketsphinx exited ${r.code}: ${r.stderr.slice(-200)}`,
          false,
        );
      }
      return parsePocketsphinxOutput(r.stdout.toString());
    } finally {
      await rm(file, { force: true });
    }
  }
}

export interface DecodedSegment extends TranscriptSegment {
  words: TranscriptWord[];
  /** Mean word posterior (0-1) reported by the decoder. */
  confidence: number;
}

const WORD_LINE = /^(\S+) (-?\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?) (-?[\d.]+(?:e[-+]?\d+)?)$/;

/**
 * Parses `pocketsphinx_continuous -time yes` output: per utterance a hypothesis line, then one
 * `word start end posterior` line per token, opened by `<s>` and closed by `</s>`. Alternate pronunciations
 * (`read(2)`) lose their suffix; fillers and silences are dropped; utterances without words are dropped.
 */
export function parsePocketsphinxOutput(out: string): DecodedSegment[] {
  const segments: DecodedSegment[] = [];
  let current: { words: TranscriptWord[]; conf: number[] } | null = null;
  const close = () => {
    if (current && current.words.length) {
      const w = current.words;
      segments.push({
        start: w[0]!.start,
        end: w[w.length - 1]!.end,
        text: w.map((x) => x.word).join(' '),
        words: w,
        confidence: round(current.conf.reduce((a, b) => a + b, 0) / current.conf.length),
      });
    }
    current = null;
  };
  for (const line of out.split('\n')) {
    const m = WORD_LINE.exec(line.trim());
    if (!m) {
      close(); // a hypothesis line starts the next utterance
      continue;
    }
    const token = m[1]!;
    if (token === '<s>') close();
    current ??= { words: [], conf: [] };
    if (NON_WORD.test(token)) continue;
    current.words.push({ word: token.replace(/\(\d+\)$/, ''), start: round(+m[2]!), end: round(+m[3]!) });
    current.conf.push(Math.min(1, Math.max(0, +m[4]!)));
  }
  close();
  return segments;
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
