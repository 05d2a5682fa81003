import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import { cpuDeadline, FlitePool } from './flite-pool.ts';
import { renderAhead } from './render-ahead.ts';
import { refuseOverlongWord } from './speakable.ts';
import { splitForSynthesis } from './text-chunks.ts';
import { TtsEngine, type TtsAudio, type TtsCapabilities, type TtsRequest, type Voice } from './types.ts';

/** Where scripts/setup.d/45-rhvoice.sh puts the worker binary. */
export const DEFAULT_RHVOICE_SERVER_BIN = fileURLToPath(
  new URL('../../../build/rhvoice-server/rhvoice-server', import.meta.url),
);
/** Debian's RHVoice data (rhvoice-english). */
export const DEFAULT_RHVOICE_DATA_DIR = '/usr/share/RHVoice';

/** Said when a request names `rhvoice` on a machine where the set-up did not install it. */
export const RHVOICE_NOT_INSTALLED =
  'tts engine "rhvoice" (RHVoice, local) is not installed here: an operator enables it by running scripts/setup.sh ' +
  'with RHVOICE=1 (it adds Debian non-free for that package; docs/speech.md). Provider "default" (flite) needs nothing';

/** RHVoice voices render 24 kHz mono (the voice data's highest rate; the library picks it). */
const RATE = 24000;

/**
 * The RHVoice voices offered: the four English voices licensed LGPL-2.1+ (CMU ARCTIC speakers). rhvoice-english
 * also carries voices whose licence forbids commercial use (evgeniy-eng, lyubov): they are neither installed
 * (scripts/setup.d/45-rhvoice.sh excludes their files) nor offered, and rhvoice-server refuses them too.
 */
export const RHVOICE_VOICES: Voice[] = [
  { id: 'rhvoice-bdl', name: 'BDL (US English, male; RHVoice, local)', language: 'en-US', gender: 'male' },
  { id: 'rhvoice-slt', name: 'SLT (US English, female; RHVoice, local)', language: 'en-US', gender: 'female' },
  { id: 'rhvoice-clb', name: 'CLB (US English, female; RHVoice, local)', language: 'en-US', gender: 'female' },
  { id: 'rhvoice-alan', name: 'Alan (Scottish English, male; RHVoice, local)', language: 'en-GB', gender: 'male' },
].map((v) => ({ ...v, gender: v.gender as Voice['gender'], provider: 'rhvoice' }));

/**
 * `default` is BDL: of the four it lost the fewest words to the local recogniser (1.5 % against 2.9-3.9 %) and
 * gave the quickest first audio (benchmarks/speech/rhvoice.ts, docs/speech.md).
 */
const DEFAULT_VOICE = 'rhvoice-bdl';

/**
 * CPU deadline of one piece: 1 s plus 30 ms a character. Measured here (RHVoice 1.8, one core): prose takes about
 * 1.4 ms a character, a run of four-digit numbers (the slowest real text found) 9–11 ms; the deadline is about
 * three times that.
 */
export const RHVOICE_CPU_DEADLINE = { baseMs: 1000, perCharMs: 30 };

export interface RhvoiceTtsOptions {
  /** The rhvoice-server binary; default the one scripts/setup.d/45-rhvoice.sh builds. */
  serverBin?: string;
  /** RHVoice's data folder (languages/, voices/). */
  dataDir?: string;
  /** Workers per pool (one pool for first audio, one at nice 10 for later pieces). */
  workers?: number;
  cpuDeadline?: { baseMs: number; perCharMs: number };
}

/** Niceness of pieces nobody waits for yet (as the flite engine: local.ts BACKGROUND_NICE). */
const BACKGROUND_NICE = 10;

/**
 * The opt-in `rhvoice` TTS engine: RHVoice's LGPL English voices (HTS parametric; clearer than flite to the local
 * recogniser, docs/speech.md), on this machine, no key. It works as the flite engine does: the text is cut into
 * sentence-sized pieces, the next rendered while the current one is sent, on pools of long-lived rhvoice-server
 * workers (the voice data loads once per worker, not per sentence), queued live-first and fair across developers
 * (FairQueue), each piece stopped at a CPU deadline proportional to its length. Speed and pitch are RHVoice's own
 * relative rate and pitch.
 */
export class RhvoiceTtsEngine extends TtsEngine {
  readonly provider = 'rhvoice';
  readonly label = 'rhvoice.tts (RHVoice, local)';
  readonly capabilities: TtsCapabilities = { streaming: true, pitch: true, requiresKey: false };
  private readonly pools: { interactive: FlitePool; background: FlitePool };

  /** True when the worker binary and the voice data are installed (scripts/setup.sh with RHVOICE=1). */
  static installed(opts: Pick<RhvoiceTtsOptions, 'serverBin' | 'dataDir'> = {}): boolean {
    const data = opts.dataDir ?? DEFAULT_RHVOICE_DATA_DIR;
    return existsSync(opts.serverBin ?? DEFAULT_RHVOICE_SERVER_BIN) && existsSync(join(data, 'voices', 'slt'));
  }

  constructor(opts: RhvoiceTtsOptions = {}) {
    super();
    const deadline = opts.cpuDeadline ?? RHVOICE_CPU_DEADLINE;
    const base = {
      bin: opts.serverBin ?? DEFAULT_RHVOICE_SERVER_BIN,
      args: [opts.dataDir ?? DEFAULT_RHVOICE_DATA_DIR],
      provider: this.provider,
      name: 'rhvoice-server',
      cpuDeadlineMs: cpuDeadline(deadline.baseMs, deadline.perCharMs),
    };
    const size = Math.max(1, opts.workers ?? 2);
    this.pools = {
      interactive: new FlitePool({ ...base, size, liveReserve: size > 1 ? 1 : 0 }),
      background: new FlitePool({ ...base, size, nice: BACKGROUND_NICE }),
    };
  }

  close(): void {
    this.pools.interactive.close();
    this.pools.background.close();
  }

  async voices(): Promise<Voice[]> {
    return RHVOICE_VOICES.map((v) => ({ ...v }));
  }

  /** RHVoice speaks English here (only rhvoice-english is installed): every language gets the default voice (BDL). */
  override async multilingualVoice(): Promise<{ voiceId: string }> {
    return { voiceId: 'default' };
  }

  /** `default`/empty → BDL; `rhvoice-slt` or the bare name `slt`. Any other name is a 400 naming the four. */
  resolveVoice(voiceId: string | undefined): string {
    const id = !voiceId || voiceId === 'default' ? DEFAULT_VOICE : voiceId.toLowerCase();
    const voice = RHVOICE_VOICES.find((v) => v.id === id || v.id === `rhvoice-${id}`);
    if (voice) return voice.id.slice('rhvoice-'.length);
    throw EngineError.invalidInput(
      this.provider,
      'invalid',
      `voiceId: "${voiceId}" is not a voice of provider "rhvoice"; it offers only its LGPL voices ` +
        `${RHVOICE_VOICES.map((v) => v.id).join(', ')} (the package's non-commercial voices are not offered)`,
      'voiceId',
    );
  }

  /** A word longer than MAX_WORD_CHARS is refused, as with flite: RHVoice would spell it out letter by letter. */
  override checkText(text: string, param: string): void {
    refuseOverlongWord(this.provider, text, param);
  }

  protected async _synthesize(req: TtsRequest): Promise<TtsAudio> {
    this.checkText(req.text, 'text');
    const voice = this.resolveVoice(req.voiceId);
    const stretch = 1 / clamp(req.speed || 1, 0.25, 4);
    const pitch = clamp(req.pitch || 1, 0.5, 2);
    const pieces = splitForSynthesis(req.text);
    if (pieces.length === 0)
      throw EngineError.invalidInput(this.provider, 'invalid', 'text: there is nothing speakable in the text', 'text');
    const background = req.priority === 'background';
    const owner = req.owner ?? {};
    const chunks = renderAhead(
      pieces,
      async (text, first, signal) => {
        const pool = first && !background ? this.pools.interactive : this.pools.background;
        const r = await pool.synthesize({ voice, stretch, f0Shift: pitch === 1 ? 0 : pitch, text }, signal, owner);
        if (r.sampleRate !== RATE)
          throw new EngineError(this.provider, 'upstream', `rhvoice-server answered at ${r.sampleRate} Hz`, false);
        return r.pcm;
      },
      req.signal,
    );
    return { sampleRate: RATE, chunks };
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}
