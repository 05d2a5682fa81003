import { parseWav } from '../../kernel/audio/wav.ts';
import type { CpuPinning } from '../../kernel/process/cpu-affinity.ts';
import { runProcess, spawnProcess, type Command } from '../../kernel/process/spawn.ts';
import { Resampler, resamplePcm } from '../../kernel/audio/resampler.ts';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { WorkOwner } from '../core/fair-queue.ts';
import { cpuDeadline, FlitePool } from './flite-pool.ts';
import { renderAhead } from './render-ahead.ts';
import { refuseOverlongWord } from './speakable.ts';
import { splitForSynthesis } from './text-chunks.ts';
import {
  primaryLanguage,
  TtsEngine,
  type SpokenVoice,
  type TtsAudio,
  type TtsCapabilities,
  type TtsRequest,
  type Voice,
} from './types.ts';
import { DEFAULT_VOICE_ID, FLITE_VOICES, parseEspeakVoices, type LocalVoice } from './voices.ts';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LocalTtsOptions {
  /** Override the configured flite (SPEECH_FLITE_BIN). */
  fliteBin?: string;
  /** Override the configured espeak-ng (SPEECH_ESPEAK_BIN). */
  espeakBin?: string;
  /** The flite-server binary; default the one scripts/setup.d/40-flite-server.sh builds. */
  fliteServerBin?: string;
  /** Workers per pool (live calls: one pool for first audio, one at nice 10 for later pieces; a third for batch). */
  fliteWorkers?: number;
  /** CPU deadline of one piece: base ms plus ms a character (default flite-pool.ts FLITE_CPU_DEADLINE). */
  cpuDeadline?: { baseMs: number; perCharMs: number };
  /**
   * Cpus of the batch pool's workers (SPEECH_LOCAL_BATCH_CPUS, resolved by cpu-affinity.ts: every core but the one
   * left to live calls, the API and the database); default not pinned.
   */
  batchCpus?: CpuPinning | null;
}

/** Where scripts/setup.d/40-flite-server.sh puts the worker binary. */
export const DEFAULT_FLITE_SERVER_BIN = fileURLToPath(
  new URL('../../../build/flite-server/flite-server', import.meta.url),
);

const SCRATCH_DIR = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/**
 * Niceness of synthesis that is not the first audio someone waits for: later pieces of a text (rendered ahead while
 * the current one plays) and `background` requests. Under CPU contention they take ~10 % of a core against normal
 * work, so first audio of other requests goes first; a piece of a few words still renders within a few hundred ms,
 * well before the audio ahead of it has played.
 */
const BACKGROUND_NICE = 10;

/**
 * Niceness of synthesis no live call waits for (API requests, video, agent previews: `owner.live` not set), on a
 * pool of its own (issue #35): every piece of it, the first included, yields the CPU to the live calls' work, and it
 * never holds a worker of the live calls' pools. It runs as fast as any when the machine has CPU to spare.
 */
export const BATCH_NICE = 10;

/** espeak-ng's default rate in words per minute, and the range it accepts. */
const ESPEAK_WPM = 175;

/**
 * The `default` TTS engine: flite voices (Debian `flite`, 16 kHz) and espeak-ng voices as a second set (22.05 kHz,
 * ~100 languages), chosen by voiceId. Runs locally, needs no key.
 *
 * Streaming: flite renders a whole utterance before writing, so the text is cut into sentence-sized pieces
 * (the first one short), the next one rendered while the current one is sent. Pieces go to a pool of long-lived
 * flite-server workers (no process start per sentence); when that binary has not been built, each piece runs its
 * own flite process. espeak-ng writes as it speaks, so one process reads the whole text: it stays spawn-based
 * (one process per request, not per sentence) as it is not the default voice set.
 *
 * Speed: flite `duration_stretch` = 1/speed; espeak-ng words per minute. Pitch: flite's `f0_shift` where the voice
 * honours it (slt, awb, kal16); otherwise (rms, espeak-ng) the audio is rendered `pitch`× slower and resampled
 * `pitch`× faster, which raises the pitch by `pitch` and restores the duration.
 */
export class LocalTtsEngine extends TtsEngine {
  readonly provider = 'default';
  readonly label = 'flite.tts+espeak-ng.tts';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: true, requiresKey: false };
  private readonly fliteBin: Command;
  private readonly espeakBin: Command;
  private espeakVoices: Promise<LocalVoice[]> | null = null;
  /**
   * Pools of flite-server workers; null when the binary is not there. Live calls: first audio (`interactive`) and
   * later pieces (`background`, nice 10). A developer's work no live call waits for: `batch` (BATCH_NICE).
   */
  private readonly pools: { interactive: FlitePool; background: FlitePool; batch: FlitePool } | null;

  constructor(opts: LocalTtsOptions = {}) {
    super();
    this.fliteBin = opts.fliteBin ? { path: opts.fliteBin } : 'flite';
    this.espeakBin = opts.espeakBin ? { path: opts.espeakBin } : 'espeak';
    const server = opts.fliteServerBin ?? DEFAULT_FLITE_SERVER_BIN;
    const size = Math.max(1, opts.fliteWorkers ?? 2);
    const cpuDeadlineMs = opts.cpuDeadline && cpuDeadline(opts.cpuDeadline.baseMs, opts.cpuDeadline.perCharMs);
    // One first-audio worker is kept for live calls when there are two or more (work without an owner, which
    // tests send straight to the engine, may still reach it).
    this.pools = existsSync(server)
      ? {
          interactive: new FlitePool({ bin: server, size, cpuDeadlineMs, liveReserve: size > 1 ? 1 : 0 }),
          background: new FlitePool({ bin: server, size, nice: BACKGROUND_NICE, cpuDeadlineMs }),
          batch: new FlitePool({
            bin: server,
            size,
            nice: BATCH_NICE,
            cpuDeadlineMs,
            cpus: opts.batchCpus ?? undefined,
          }),
        }
      : null;
  }

  /** Process ids of each pool's flite-server workers (empty where the pools are not there). */
  get workerPids(): { interactive: number[]; background: number[]; batch: number[] } {
    const p = this.pools;
    return { interactive: p?.interactive.pids ?? [], background: p?.background.pids ?? [], batch: p?.batch.pids ?? [] };
  }

  /** True when synthesis runs on long-lived flite-server workers rather than one flite process per piece. */
  get pooled(): boolean {
    return this.pools !== null;
  }

  /** Stops the flite-server workers (they also exit on their own when this process does). */
  close(): void {
    this.pools?.interactive.close();
    this.pools?.background.close();
    this.pools?.batch.close();
  }

  async voices(): Promise<Voice[]> {
    const all = [...FLITE_VOICES, ...(await this.listEspeak())];
    return all.map(({ id, name, language, gender, provider }) => ({ id, name, language, gender, provider }));
  }

  /** English → the default (flite) voice; any other language → espeak-ng's voice for it. */
  override async multilingualVoice(language: string): Promise<SpokenVoice> {
    const lang = primaryLanguage(language);
    return { voiceId: lang === 'en' ? 'default' : `espeak-${lang}` };
  }

  /** `default`/empty → the default voice; `flite-slt` or the bare native name `slt`; `espeak-fr`, `espeak-en-us-f`… */
  async resolveVoice(voiceId: string | undefined): Promise<LocalVoice> {
    const id = !voiceId || voiceId === 'default' ? DEFAULT_VOICE_ID : voiceId;
    const flite = FLITE_VOICES.find((v) => v.id === id || v.native === id);
    if (flite) return flite;
    if (id.startsWith('espeak-')) {
      const found = (await this.listEspeak()).find((v) => v.id === id);
      if (found) return found;
    }
    throw EngineError.invalidInput(
      this.provider,
      'invalid',
      `voiceId: unknown voice "${voiceId}" for provider "default"; GET /v1/voices lists the voices`,
      'voiceId',
    );
  }

  /** A word longer than MAX_WORD_CHARS is refused: flite and espeak-ng would spell it out for minutes. */
  override checkText(text: string, param: string): void {
    refuseOverlongWord(this.provider, text, param);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    this.checkText(req.text, 'text');
    const voice = await this.resolveVoice(req.voiceId);
    const speed = clamp(req.speed || 1, 0.25, 4);
    const pitch = clamp(Math.round((req.pitch || 1) * 100) / 100, 0.5, 2);
    const pieces = splitForSynthesis(req.text);
    if (pieces.length === 0)
      throw EngineError.invalidInput(this.provider, 'invalid', 'text: there is nothing speakable in the text', 'text');
    const chunks =
      voice.synth === 'flite'
        ? this.fliteChunks(pieces, voice, speed, pitch, req.priority === 'background', req.owner ?? {}, req.signal)
        : this.espeakChunks(
            pieces.join(' '),
            voice,
            speed,
            pitch,
            req.priority === 'background' || isBatch(req.owner),
            req.signal,
          );
    return { sampleRate: voice.sampleRate, chunks };
  }

  private listEspeak(): Promise<LocalVoice[]> {
    this.espeakVoices ??= runProcess(this.espeakBin, ['--voices'])
      .then((r) => (r.code === 0 ? parseEspeakVoices(r.stdout.toString()) : []))
      .catch(() => []);
    return this.espeakVoices;
  }

  private fliteChunks(
    pieces: string[],
    voice: LocalVoice,
    speed: number,
    pitch: number,
    background: boolean,
    owner: WorkOwner,
    signal?: AbortSignal,
  ): AsyncGenerator<Buffer> {
    // Pieces after the first are rendered ahead at a lower priority: the first audio of other requests goes first.
    return renderAhead(
      pieces,
      (text, first, sig) =>
        this.renderFlite(text, voice, speed, pitch, first && !background ? 0 : BACKGROUND_NICE, owner, sig),
      signal,
    );
  }

  private async renderFlite(
    text: string,
    voice: LocalVoice,
    speed: number,
    pitch: number,
    nice: number,
    owner: WorkOwner,
    signal: AbortSignal,
  ): Promise<Buffer> {
    const stretch = voice.nativePitch || pitch === 1 ? 1 / speed : pitch / speed;
    const pcm = this.pools
      ? await this.renderPooled(text, voice, stretch, voice.nativePitch && pitch !== 1 ? pitch : 0, nice, owner, signal)
      : await this.spawnFlite(text, voice, stretch, pitch, isBatch(owner) ? BATCH_NICE : nice, signal);
    return voice.nativePitch || pitch === 1
      ? pcm
      : resamplePcm(pcm, pitchRate(voice.sampleRate, pitch), voice.sampleRate);
  }

  private async renderPooled(
    text: string,
    voice: LocalVoice,
    stretch: number,
    f0Shift: number,
    nice: number,
    owner: WorkOwner,
    signal: AbortSignal,
  ): Promise<Buffer> {
    // Work for a developer that no live call waits for goes to the batch pool; work without an owner (the engine
    // used directly) keeps the live pools' priorities.
    const pool = isBatch(owner) ? this.pools!.batch : nice > 0 ? this.pools!.background : this.pools!.interactive;
    const r = await pool.synthesize({ voice: voice.native, stretch, f0Shift, text }, signal, owner);
    return r.pcm;
  }

  /** The fallback without flite-server: one flite process for the piece, writing a WAV in /dev/shm. */
  private async spawnFlite(
    text: string,
    voice: LocalVoice,
    stretch: number,
    pitch: number,
    nice: number,
    signal: AbortSignal,
  ): Promise<Buffer> {
    const args = ['-voice', voice.native, '--setf', `duration_stretch=${stretch.toFixed(3)}`];
    if (voice.nativePitch && pitch !== 1) args.push('--setf', `f0_shift=${pitch}`);
    // flite cannot write to a socket (Node's stdio), so it writes a file in memory-backed /dev/shm.
    const out = join(SCRATCH_DIR, `vap-flite-${randomBytes(8).toString('hex')}.wav`);
    args.push('-t', text, '-o', out);
    let wav: Buffer;
    try {
      const r = await runProcess(this.fliteBin, args, { signal, nice }).catch((e: Error) => {
        throw signal.aborted ? e : new EngineError(this.provider, 'unavailable', `flite failed: ${e.message}`, false);
      });
      if (r.code !== 0) {
        throw new EngineError(this.provider, 'upstream', `flite exited ${r.code}: ${r.stderr.slice(0, 200)}`, false);
      }
      wav = await readFile(out);
    } finally {
      await rm(out, { force: true });
    }
    return Buffer.from(parseWav(wav).data);
  }

  private async *espeakChunks(
    text: string,
    voice: LocalVoice,
    speed: number,
    pitch: number,
    background: boolean,
    signal?: AbortSignal,
  ): AsyncGenerator<Buffer> {
    const wpm = Math.round(clamp((ESPEAK_WPM * speed) / pitch, 80, 450));
    const p = spawnProcess(this.espeakBin, ['-v', voice.native, '-s', String(wpm), '-b', '1', '--stdout'], {
      stdin: 'pipe',
      signal,
      nice: background ? BACKGROUND_NICE : 0,
    });
    p.proc.stdin!.end(text);
    const resampler = pitch === 1 ? null : new Resampler(pitchRate(voice.sampleRate, pitch), voice.sampleRate);
    let header = Buffer.alloc(0);
    let headerDone = false;
    let odd: Buffer = Buffer.alloc(0);
    try {
      for await (const raw of p.proc.stdout!) {
        let chunk = raw as Buffer;
        if (!headerDone) {
          header = Buffer.concat([header, chunk]);
          if (header.length < 44) continue;
          chunk = header.subarray(44); // espeak-ng writes the canonical 44-byte header
          headerDone = true;
        }
        const buf = odd.length ? Buffer.concat([odd, chunk]) : chunk;
        const even = buf.length - (buf.length % 2);
        odd = buf.subarray(even);
        const pcm = buf.subarray(0, even);
        const out = resampler ? resampler.processPcm(pcm) : pcm;
        if (out.length) yield out;
      }
      if (resampler) {
        const tail = resampler.flushPcm();
        if (tail.length) yield tail;
      }
      const code = await p.exited.catch((e: Error) => {
        throw signal?.aborted
          ? e
          : new EngineError(this.provider, 'unavailable', `espeak-ng failed: ${e.message}`, false);
      });
      if (code !== 0) {
        throw new EngineError(this.provider, 'unavailable', `espeak-ng failed: exit ${code}`, false);
      }
    } finally {
      p.kill();
    }
  }
}

/** Work for a developer that no live call waits for (an API request, a video job): the batch pool's. */
function isBatch(owner: WorkOwner | undefined): boolean {
  return owner?.tenant !== undefined && !owner.live;
}

/** The rate at which pitch-shifted audio is "played back": a multiple of 50 Hz so the resampler stays small. */
function pitchRate(sampleRate: number, pitch: number): number {
  return Math.round((sampleRate * pitch) / 50) * 50;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}
