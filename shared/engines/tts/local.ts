import { parseWav } from '../../kernel/audio/wav.ts';
import { runProcess, spawnProcess, type Command } from '../../kernel/process/spawn.ts';
import { Resampler, resamplePcm } from '../../kernel/audio/resampler.ts';
import { EngineError, isEngineError } from '../../kernel/errors/engine-error.ts';
import type { WorkOwner } from '../core/fair-queue.ts';
import { cpuDeadline, FlitePool } from './flite-pool.ts';
import { hasOverlongWord, overlongWordMessage } from './speakable.ts';
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
  /** Workers per pool (one pool for first audio, one at nice 10 for later pieces). */
  fliteWorkers?: number;
  /** CPU deadline of one piece: base ms plus ms a character (default flite-pool.ts FLITE_CPU_DEADLINE). */
  cpuDeadline?: { baseMs: number; perCharMs: number };
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
  /** First-audio and background pools of flite-server workers; null when the binary is not there. */
  private readonly pools: { interactive: FlitePool; background: FlitePool } | null;

  constructor(opts: LocalTtsOptions = {}) {
    super();
    this.fliteBin = opts.fliteBin ? { path: opts.fliteBin } : 'flite';
    this.espeakBin = opts.espeakBin ? { path: opts.espeakBin } : 'espeak';
    const server = opts.fliteServerBin ?? DEFAULT_FLITE_SERVER_BIN;
    const size = Math.max(1, opts.fliteWorkers ?? 2);
    const cpuDeadlineMs = opts.cpuDeadline && cpuDeadline(opts.cpuDeadline.baseMs, opts.cpuDeadline.perCharMs);
    // One first-audio worker is kept for live calls when there are two or more: a developer's batch first pieces
    // never hold every worker a caller's greeting needs.
    this.pools = existsSync(server)
      ? {
          interactive: new FlitePool({ bin: server, size, cpuDeadlineMs, liveReserve: size > 1 ? 1 : 0 }),
          background: new FlitePool({ bin: server, size, nice: BACKGROUND_NICE, cpuDeadlineMs }),
        }
      : null;
  }

  /** True when synthesis runs on long-lived flite-server workers rather than one flite process per piece. */
  get pooled(): boolean {
    return this.pools !== null;
  }

  /** Stops the flite-server workers (they also exit on their own when this process does). */
  close(): void {
    this.pools?.interactive.close();
    this.pools?.background.close();
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
    if (hasOverlongWord(text))
      throw EngineError.invalidInput(this.provider, 'invalid', overlongWordMessage(param), param);
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
        : this.espeakChunks(pieces.join(' '), voice, speed, pitch, req.priority === 'background', req.signal);
    return { sampleRate: voice.sampleRate, chunks };
  }

  private listEspeak(): Promise<LocalVoice[]> {
    this.espeakVoices ??= runProcess(this.espeakBin, ['--voices'])
      .then((r) => (r.code === 0 ? parseEspeakVoices(r.stdout.toString()) : []))
      .catch(() => []);
    return this.espeakVoices;
  }

  private async *fliteChunks(
    pieces: string[],
    voice: LocalVoice,
    speed: number,
    pitch: number,
    background: boolean,
    owner: WorkOwner,
    signal?: AbortSignal,
  ): AsyncGenerator<Buffer> {
    // One piece is rendered ahead of the one being sent; the controller kills it if the consumer stops early.
    const ac = new AbortController();
    const onAbort = () => ac.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const render = (text: string, nice: number) => {
      const p = this.renderFlite(text, voice, speed, pitch, nice, owner, ac.signal);
      p.catch(() => {});
      return p;
    };
    try {
      let next = render(pieces[0]!, background ? BACKGROUND_NICE : 0);
      for (let i = 0; i < pieces.length; i++) {
        const current = await next.catch((e: unknown) => {
          throw withWorkDone(e, pieces, i);
        });
        if (i + 1 < pieces.length) next = render(pieces[i + 1]!, BACKGROUND_NICE);
        if (current.length) yield current;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      ac.abort();
    }
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
      : await this.spawnFlite(text, voice, stretch, pitch, nice, signal);
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
    const pool = nice > 0 ? this.pools!.background : this.pools!.interactive;
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

/**
 * A piece stopped at its CPU deadline (`too_costly`) was work the text caused: the error carries the share of the
 * text up to and including that piece, which the caller charges instead of refunding.
 */
function withWorkDone(e: unknown, pieces: string[], failed: number): unknown {
  if (!isEngineError(e) || e.problem !== 'too_costly') return e;
  const chars = (n: number) => pieces.slice(0, n).reduce((sum, p) => sum + p.length, 0);
  e.workDone = chars(failed + 1) / chars(pieces.length);
  return e;
}

/** The rate at which pitch-shifted audio is "played back": a multiple of 50 Hz so the resampler stays small. */
function pitchRate(sampleRate: number, pitch: number): number {
  return Math.round((sampleRate * pitch) / 50) * 50;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}
