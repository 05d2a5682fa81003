import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Resampler } from '../../kernel/audio/resampler.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { isEnglish } from './pocketsphinx.ts';
import { PsStreamPool } from './pocketsphinx-stream/ps-stream-pool.ts';
import {
  SttEngine,
  type SttCapabilities,
  type SttRequest,
  type SttStream,
  type SttStreamOptions,
  type TranscriptionResult,
} from './types.ts';

/** Where scripts/setup.d/41-ps-stream.sh puts the streaming worker. */
export const DEFAULT_PS_STREAM_BIN = fileURLToPath(new URL('../../../build/ps-stream/ps-stream', import.meta.url));

export const LOCAL_LIVE_STT_LABEL = 'pocketsphinx (local, streaming)';

export interface LocalLiveSttOptions {
  /** The ps-stream binary. */
  bin: string;
  /** Folder with `en-us/`, `en-us.lm.bin` and `cmudict-en-us.dict` (Debian pocketsphinx-en-us). */
  modelDir?: string;
  /** Worker processes (each one thread hosting many calls); default the core count. */
  workers?: number;
  /**
   * Silence (ms) after which an utterance ends and its final is sent (default 250: longer than the pause flite and
   * most speakers make at a comma, 230 ms in "Hello, are you open…", so a sentence is one final).
   */
  hangoverMs?: number;
  /** Decoders a worker keeps loaded while nobody speaks (about 80 MB each; default 4). */
  keepIdle?: number;
  /** pocketsphinx's search settings (beams, caps, passes); default LIVE_DECODER_ARGS. The benchmark compares others. */
  decoderArgs?: readonly string[];
}

/**
 * Decoder settings of the live recogniser: the accurate mode's beams (1e-48; 1e-40 before), at most 3000 active HMMs
 * and 10 word exits a frame, the 4 best Gaussians (2 before), no forward-flat second pass (it re-decodes the whole
 * utterance after its end, adding its length to the final's delay) and best-path rescoring at the end (a few ms).
 * Measured by `bench:local-stt --sets stream` (flite questions over 8 kHz μ-law, 426 s of audio, 2 loaded cores):
 * WER general 36.2 % / biased 32.7 % at 0.066 / 0.064 s of CPU per audio second (load ≈ 5), against 38.9 % /
 * 35.3 % at 0.065 / 0.052 with 2 Gaussians (same sitting) and 47.3 % / 43.1 % with the 1e-40 beams; 10000 HMMs
 * and 20 word exits gave 33.4 % / 30.9 % at 0.094 / 0.082 (fewer calls a core); `-ds 2` lost 10 points for 10-25 %
 * less CPU (benchmarks/local-stt/README.md). A decoder's start costs 0.4 s of CPU (it then stays in its pool).
 */
export const LIVE_DECODER_ARGS: readonly string[] = [
  ...['-beam', '1e-48', '-wbeam', '7e-29', '-pbeam', '1e-48', '-maxhmmpf', '3000', '-maxwpf', '10', '-topn', '4'],
  ...['-fwdflat', 'no', '-bestpath', 'yes', '-remove_silence', 'no'],
];

/**
 * The local live STT of calls: pocketsphinx decoding as the caller speaks, on long-lived ps-stream workers
 * (./pocketsphinx-stream/ps-stream.c: many calls a process, a decoder per caller only while they speak), with
 * partial hypotheses as they change and a final per utterance 250 ms after the caller stops, the same transcript
 * events as the vendors' live STTs. Whole recordings (`transcribe`) go to the batch engine it is given.
 */
export class LocalLiveSttEngine extends SttEngine {
  readonly provider = 'default';
  readonly label = LOCAL_LIVE_STT_LABEL;
  readonly capabilities: SttCapabilities = {
    streaming: true,
    diarization: false,
    wordTimestamps: false,
    // Phone audio comes in at 8 kHz (resampled here to the model's 16 kHz), so the decoders know the kind of line.
    sampleRates: [8000, 16000],
    languages: ['en'],
    requiresKey: false,
  };
  readonly pool: PsStreamPool;

  constructor(
    private readonly batch: SttEngine,
    opts: LocalLiveSttOptions,
  ) {
    super();
    const dir = opts.modelDir ?? '/usr/share/pocketsphinx/model/en-us';
    this.pool = new PsStreamPool({
      bin: opts.bin,
      size: Math.max(1, opts.workers ?? availableParallelism()),
      args: [
        ...['--lm', join(dir, 'en-us.lm.bin'), '--dict', join(dir, 'cmudict-en-us.dict')],
        ...['--hangover-ms', String(opts.hangoverMs ?? 250), '--keep-idle', String(opts.keepIdle ?? 4)],
        ...['--', '-hmm', join(dir, 'en-us'), '-samprate', '16000', ...(opts.decoderArgs ?? LIVE_DECODER_ARGS)],
      ],
    });
  }

  /** What this engine is for one request: its label, with the language model's when it has one. */
  labelFor(languageModel?: SttStreamOptions['languageModel']): string {
    return languageModel ? `pocketsphinx (local, streaming, ${languageModel.label})` : this.label;
  }

  protected _transcribe(req: SttRequest): Promise<TranscriptionResult> {
    return this.batch.transcribe(req);
  }

  protected override _stream(opts: SttStreamOptions): SttStream {
    if (!isEnglish(opts.language)) {
      throw EngineError.invalidInput(
        this.provider,
        'unsupported_language',
        `language "${opts.language}" is not supported by the local live STT (${this.label}: English only)`,
        'language',
      );
    }
    const lm = opts.languageModel;
    const stream = this.pool.open(String(opts.sampleRate), lm ? `${lm.lm}\t${lm.dict}` : '', opts.signal);
    return opts.sampleRate === 16000 ? stream : resampled(stream, opts.sampleRate);
  }

  close(): void {
    this.pool.close();
  }
}

/** The stream fed at `rate`: its audio goes to the decoder at 16 kHz. */
function resampled(stream: SttStream, rate: number): SttStream {
  const r = new Resampler(rate, 16000);
  return {
    events: stream.events,
    write: (pcm) => stream.write(r.processPcm(pcm)),
    end: () => stream.end(),
    close: () => stream.close(),
  };
}
