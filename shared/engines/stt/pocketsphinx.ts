import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cutAtPauses, type AudioPiece } from '../../kernel/audio/pauses.ts';
import { pcmToInt16 } from '../../kernel/audio/pcm.ts';
import { FairQueue, type WorkOwner } from '../core/fair-queue.ts';
import { ProcessExitError, processLines, type Command } from '../../kernel/process/spawn.ts';
import { resamplePcm } from '../../kernel/audio/resampler.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { diarize } from './diarize.ts';
import { lastCepstralMean, withCmnInit } from './pocketsphinx-cmn.ts';
import { PocketsphinxOutputParser, round, type DecodedSegment } from './pocketsphinx-output.ts';
import {
  SttEngine,
  type SttCapabilities,
  type SttProgress,
  type SttRequest,
  type TranscriptionResult,
} from './types.ts';

export { parsePocketsphinxOutput, type DecodedSegment } from './pocketsphinx-output.ts';

export interface PocketsphinxOptions {
  /** Folder with the acoustic model (`en-us/`), `en-us.lm.bin` and `cmudict-en-us.dict` (Debian pocketsphinx-en-us). */
  modelDir?: string;
  /** Override the configured pocketsphinx_continuous (POCKETSPHINX_PATH). */
  bin?: string;
  /** Decoders running at once in this process (each is single-threaded); others wait. Default: the core count. */
  maxConcurrent?: number;
  /**
   * Start each recording's decode from the recording's own cepstral mean (`cepstralMean`; default true). False
   * starts from the model's, as before: for the benchmark's and the tests' comparisons.
   */
  calibrateCmn?: boolean;
}

/**
 * A counting semaphore: more decoders than cores only makes every one of them slower. Waiters are let in in
 * FairQueue order: live calls first, then the developer served least recently, so one developer's queued
 * recordings do not hold back another's (issue #35).
 */
class Slots {
  private free: number;
  private readonly waiting = new FairQueue<() => void>();
  constructor(n: number) {
    this.free = Math.max(1, n);
  }
  /** Waits for a slot (an abort leaves the queue); the returned function gives it back, once. */
  async acquire(signal?: AbortSignal, owner?: WorkOwner): Promise<() => void> {
    signal?.throwIfAborted();
    // Every request goes through the queue, even with a slot free, so the queue knows whom it served last.
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', abort);
        resolve();
      };
      const abort = () => {
        if (this.waiting.remove(go)) reject(signal!.reason);
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.waiting.push(go, owner);
      this.dispatch();
    });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.free++;
      this.dispatch();
    };
  }

  private dispatch(): void {
    for (let next; this.free > 0 && (next = this.waiting.shift());) {
      this.free--;
      next();
    }
  }
}

const SCRATCH_DIR = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/**
 * Decoder settings per mode. `accurate` is pocketsphinx's own default search (wide beams, forward-flat second
 * pass and best-path lattice rescoring). `fast` narrows the beams, caps active HMMs/words per frame, uses the
 * phonetic-loop look-ahead and skips both extra passes: about twice as fast, a few points more WER.
 * `fast` with an agent's model (BIASED_FAST) keeps the accurate beams and the best-path rescoring and skips only the
 * forward-flat pass: the narrow beams lost the agent's words (in-domain WER 27.8 % against 16.4 %, flite voices,
 * benchmarks/local-stt/README.md), and a biased model is small enough that the wider search costs about what the
 * general model's narrow one does.
 */
const DECODER_SETTINGS: Record<SttRequest['mode'], string[]> = {
  accurate: ['-beam', '1e-48', '-wbeam', '7e-29', '-pbeam', '1e-48', '-fwdflat', 'yes', '-bestpath', 'yes'],
  fast: [
    ...['-beam', '1e-35', '-wbeam', '1e-25', '-pbeam', '1e-35', '-maxhmmpf', '3000', '-maxwpf', '10'],
    ...['-fwdflat', 'no', '-bestpath', 'no', '-pl_window', '5', '-topn', '2'],
  ],
};
const BIASED_FAST = [
  ...['-beam', '1e-48', '-wbeam', '7e-29', '-pbeam', '1e-48'],
  ...['-fwdflat', 'no', '-bestpath', 'yes'],
];

/** The decoder settings of one request: its mode's, or BIASED_FAST for `fast` with an agent's model. */
export function decoderSettings(mode: SttRequest['mode'], biased: boolean): string[] {
  return mode === 'fast' && biased ? BIASED_FAST : DECODER_SETTINGS[mode];
}

/**
 * Pieces for incremental decoding: cut at the longest pause 10-30 s into each piece. Within a piece the decoder's
 * own endpointer already reports each utterance as it ends, so the pieces only bound how long a stretch of speech
 * without pauses can hold the first delta back (and each extra piece costs one decoder start, ~0.3 s).
 */
export const INCREMENTAL_PIECES = { minSeconds: 10, maxSeconds: 30 };

/** Audio the calibration pass hears (`cepstralMean`): a recording's first 20 s at most. */
const CALIBRATION_SAMPLES = 20 * 16000;
/** The calibration pass's keyword (the search is there only to run the front end; what it finds is thrown away). */
const CALIBRATION_WORD = 'hello';

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
  private readonly bin: Command;
  private readonly slots: Slots;
  /** Decoders one request may use at once (`parallel`): every slot of this process. */
  private readonly parallelism: number;
  private featParams: Promise<string> | null = null;
  private calDict: Promise<string> | null = null;
  private readonly calibrateCmn: boolean;

  constructor(opts: PocketsphinxOptions = {}) {
    super();
    this.modelDir = opts.modelDir ?? '/usr/share/pocketsphinx/model/en-us';
    this.bin = opts.bin ? { path: opts.bin } : 'pocketsphinx';
    this.parallelism = Math.max(1, opts.maxConcurrent ?? availableParallelism());
    this.slots = new Slots(this.parallelism);
    this.calibrateCmn = opts.calibrateCmn ?? true;
  }

  protected async _transcribe(req: SttRequest): Promise<TranscriptionResult> {
    // The whole recording in one decoder run: its endpointer and cepstral normalisation see everything, and the
    // result is what this engine has always returned.
    for await (const ev of this.decodeInPieces(req, (samples) => [{ start: 0, end: samples.length }])) {
      if (ev.type === 'result') return ev.result;
    }
    throw new EngineError(this.provider, 'upstream', 'pocketsphinx ended without a result', false);
  }

  /**
   * Incremental: the recording is cut at pauses into pieces of at most 30 s (INCREMENTAL_PIECES), decoded one
   * after another by one decoder slot, and each utterance is reported as soon as the decoder prints it. Segment
   * and word times are from the start of the recording. Speaker labels need every segment, so with `diarize`
   * they are on the result's segments only.
   */
  protected override _transcribeIncremental(req: SttRequest): AsyncGenerator<SttProgress> {
    return this.decodeInPieces(req, (samples) => cutAtPauses(samples, 16000, INCREMENTAL_PIECES));
  }

  /** "pocketsphinx, local, general English model" or "pocketsphinx, local, biased to agent agt_…". */
  override describe(req?: Pick<SttRequest, 'languageModel'>): string {
    return `pocketsphinx, local, ${req?.languageModel?.label ?? 'general English model'}`;
  }

  private async *decodeInPieces(
    req: SttRequest,
    plan: (samples: Int16Array) => AudioPiece[],
  ): AsyncGenerator<SttProgress> {
    if (!isEnglish(req.language)) {
      throw EngineError.invalidInput(
        this.provider,
        'unsupported_language',
        `language "${req.language}" is not supported by the default engine (${this.label}: English only); leave language empty, send "en", or pick a provider that supports it`,
        'language',
      );
    }
    const pcm = resamplePcm(req.pcm, req.sampleRate, 16000);
    const duration = pcm.length / 2 / 16000;
    const segments: DecodedSegment[] = [];
    if (duration > 0.05) {
      const pieces = plan(pcmToInt16(pcm));
      const groups = req.parallel ? splitGroups(pieces, Math.min(this.parallelism, pieces.length)) : [pieces];
      for await (const seg of this.decodeGroups(pcm, groups, req)) {
        segments.push(seg);
        yield { type: 'segment', segment: { start: seg.start, end: seg.end, text: seg.text } };
      }
    }
    if (req.diarize && segments.length > 0) {
      const labels = diarize(pcmToInt16(pcm), 16000, segments);
      segments.forEach((s, i) => (s.speaker = labels[i]));
    }
    const words = segments.flatMap((s) => s.words);
    yield {
      type: 'result',
      result: {
        text: segments.map((s) => s.text).join(' '),
        segments: segments.map(({ words: _w, ...seg }) => seg),
        ...(req.timestamps === 'word' ? { words } : {}),
        language: 'en',
        duration: round(duration),
      },
    };
  }

  /**
   * Decodes groups of consecutive pieces, each group in its own decoder slot and all groups at once, yielding
   * segments in recording order: the first group's as they come, a later group's once the groups before it are
   * done. Within a group the pieces pass the cepstral mean on from one to the next (./pocketsphinx-cmn.ts); each
   * group's first piece starts from the mean of its own first seconds (`cepstralMean`). One group (the default) is
   * one slot for the whole recording, as for a whole-file decode: a stream is not starved between pieces.
   */
  private async *decodeGroups(pcm: Buffer, groups: AudioPiece[][], req: SttRequest): AsyncGenerator<DecodedSegment> {
    const ac = new AbortController();
    const signal = req.signal ? AbortSignal.any([req.signal, ac.signal]) : ac.signal;
    const out = groups.map(() => ({ segments: [] as DecodedSegment[], done: false, error: null as unknown }));
    let wake: (() => void) | null = null;
    const notify = () => {
      wake?.();
      wake = null;
    };
    const runs = groups.map(async (pieces, g) => {
      try {
        const release = await this.slots.acquire(signal, req.owner);
        try {
          const first = pieces[0]!;
          const head = pcm.subarray(first.start * 2, Math.min(first.end, first.start + CALIBRATION_SAMPLES) * 2);
          const cmn: CmnCarry = { mean: this.calibrateCmn ? await this.cepstralMean(head, signal) : null };
          for (const piece of pieces) {
            const audio = pcm.subarray(piece.start * 2, piece.end * 2);
            for await (const seg of this.decode(audio, piece.start / 16000, { ...req, signal }, cmn)) {
              out[g]!.segments.push(seg);
              notify();
            }
          }
        } finally {
          release();
        }
      } catch (e) {
        out[g]!.error = e;
      } finally {
        out[g]!.done = true;
        notify();
      }
    });
    try {
      for (const group of out) {
        let taken = 0;
        for (;;) {
          while (taken < group.segments.length) yield group.segments[taken++]!;
          if (group.error) throw group.error;
          if (group.done) break;
          await new Promise<void>((r) => (wake = r));
        }
      }
    } finally {
      ac.abort(new Error('transcription stopped'));
      await Promise.allSettled(runs);
    }
  }

  /**
   * One decoder run over `pcm`, yielding each utterance as soon as the decoder prints it (it flushes its output
   * after every utterance its endpointer closes). `offset` (seconds) places the piece in the recording; the
   * request's language model, when it has one, replaces the general model and dictionary. With
   * `cmn`, the run starts from its cepstral mean (when set) and leaves the mean it ended with there.
   */
  private async *decode(
    pcm: Buffer,
    offset: number,
    req: Pick<SttRequest, 'mode' | 'signal' | 'languageModel'>,
    cmn?: CmnCarry,
  ): AsyncGenerator<DecodedSegment> {
    const { mode, signal, languageModel } = req;
    // pocketsphinx_continuous reads a file (it cannot open Node's socket stdio): raw PCM in memory-backed /dev/shm.
    const base = join(SCRATCH_DIR, `vap-ps-${randomBytes(8).toString('hex')}`);
    const file = `${base}.raw`;
    const log = cmn ? `${base}.log` : '/dev/null';
    const feat = cmn?.mean ? `${base}.feat` : null;
    await writeFile(file, pcm);
    try {
      if (feat) await writeFile(feat, withCmnInit(await this.modelFeatParams(), cmn!.mean!));
      const args = [
        ...['-hmm', join(this.modelDir, 'en-us'), '-samprate', '16000'],
        // A request's own model (an agent's, biased to its words) replaces the general one, with its dictionary.
        ...['-lm', languageModel?.lm ?? join(this.modelDir, 'en-us.lm.bin')],
        ...['-dict', languageModel?.dict ?? join(this.modelDir, 'cmudict-en-us.dict')],
        ...['-infile', file, '-time', 'yes', '-logfn', log],
        ...(feat ? ['-featparams', feat] : []),
        ...decoderSettings(mode, languageModel !== undefined),
      ];
      const parser = new PocketsphinxOutputParser(offset);
      try {
        for await (const line of processLines(this.bin, args, { signal })) {
          const seg = parser.line(line);
          if (seg) yield seg;
        }
      } catch (e) {
        if (signal?.aborted) throw e;
        if (e instanceof ProcessExitError) {
          throw new EngineError(
            this.provider,
            'upstream',
            `pocketsphinx exited ${e.exitCode}: ${e.stderr.slice(-200)}`,
            false,
          );
        }
        const code = (e as Error & { code?: string }).code;
        throw new EngineError(
          this.provider,
          'unavailable',
          `pocketsphinx could not start: ${code ?? (e as Error).message}`,
          false,
        );
      }
      const last = parser.end();
      // No log (or no update in it: a piece of silence) keeps the mean we had: a worse start, not a failure.
      if (cmn) cmn.mean = lastCepstralMean(await readFile(log, 'utf8').catch(() => '')) ?? cmn.mean;
      if (last) yield last;
    } finally {
      await Promise.all([file, cmn ? log : null, feat].map((f) => f && rm(f, { force: true })));
    }
  }

  /**
   * The cepstral mean of `pcm` (`-cmninit` syntax), or null when it has no speech: a pass of the decoder's front end
   * over the audio with a one-word keyword search (no language model to load, almost no search), whose log reports
   * the mean its live CMN ends with: the same numbers a full decode of the audio reports (the mean depends on the
   * audio and the voice-activity detector only). Live CMN starts from the model's `-cmninit` and moves to a
   * speaker's mean only at the end of an utterance (or after 8 s of speech), so a short recording used to be decoded
   * whole with a mean from elsewhere; starting from its own is what a batch decoder's CMN does. Measured
   * (benchmarks/local-stt/README.md, fourth round): in-domain WER biased 16.4 % → 14.1 %, general 37.1 % → 27.4 %;
   * LibriVox biased 35.2 % → 33.8 %, general 36.6 % → 31.0 %. The pass costs about a seventh of a short decode's
   * CPU (0.08 s against 0.56 s a question).
   */
  async cepstralMean(pcm: Buffer, signal?: AbortSignal): Promise<string | null> {
    if (pcm.length < 2 * 1600) return null;
    const base = join(SCRATCH_DIR, `vap-ps-${randomBytes(8).toString('hex')}`);
    const [file, log] = [`${base}.raw`, `${base}.log`];
    await writeFile(file, pcm);
    try {
      const args = [
        ...['-hmm', join(this.modelDir, 'en-us'), '-samprate', '16000', '-infile', file, '-logfn', log],
        ...['-dict', await this.calibrationDict(), '-keyphrase', CALIBRATION_WORD],
      ];
      // Its output (the keyword's hits) is not wanted: only the log's mean.
      for await (const hit of processLines(this.bin, args, { signal })) void hit;
      return lastCepstralMean(await readFile(log, 'utf8'));
    } catch (e) {
      if (signal?.aborted) throw e;
      this.calDict = null; // written again next time, in case the scratch file went
      return null; // the decode proper reports a decoder that cannot run; without a mean it starts from the model's
    } finally {
      await Promise.all([file, log].map((f) => rm(f, { force: true })));
    }
  }

  /**
   * The calibration pass's dictionary: its one keyword (loading the full dictionary would cost more than the pass).
   * One file for every process, written whole under a temporary name and renamed into place (same content).
   */
  private calibrationDict(): Promise<string> {
    const path = join(SCRATCH_DIR, 'vap-ps-calibration.dict');
    const tmp = `${path}.${randomBytes(4).toString('hex')}`;
    this.calDict ??= writeFile(tmp, `${CALIBRATION_WORD} HH AH L OW\n`)
      .then(() => rename(tmp, path))
      .then(() => path);
    this.calDict.catch(() => (this.calDict = null));
    return this.calDict;
  }

  /** The acoustic model's feature parameters, read once (the base of a piece's `-featparams`). */
  private modelFeatParams(): Promise<string> {
    this.featParams ??= readFile(join(this.modelDir, 'en-us', 'feat.params'), 'utf8');
    this.featParams.catch(() => (this.featParams = null));
    return this.featParams;
  }
}

/** `pieces` as `n` runs of consecutive pieces of about equal audio length. */
export function splitGroups(pieces: AudioPiece[], n: number): AudioPiece[][] {
  if (n <= 1 || pieces.length <= 1) return [pieces];
  const total = pieces[pieces.length - 1]!.end - pieces[0]!.start;
  const groups: AudioPiece[][] = [[]];
  for (const p of pieces) {
    const g = groups[groups.length - 1]!;
    // Start the next group once this one holds its share of the audio (never leaving a group empty).
    if (g.length > 0 && groups.length < n && p.start - pieces[0]!.start >= (total * groups.length) / n)
      groups.push([p]);
    else g.push(p);
  }
  return groups;
}

/** The cepstral mean one piece's decoder hands to the next (`-cmninit` syntax), null before the first. */
interface CmnCarry {
  mean: string | null;
}
