import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulawToPcm } from '../../kernel/audio/mulaw.ts';
import { resamplePcm } from '../../kernel/audio/resampler.ts';
import { trimSilence } from '../../kernel/audio/trim-silence.ts';
import { parseWav } from '../../kernel/audio/wav.ts';
import type { CALLER_VOICES, Scenario, ScenarioTurn, TurnAudio } from '../../contracts/agent-tests.ts';
import { runProcess } from '../../kernel/process/spawn.ts';
import { clipFor, hardClip } from './impairments.ts';

/**
 * A turn's caller audio, 8 kHz PCM (what a phone line carries): a `say` turn's words synthesized by the local flite
 * voice, one stretch per segment between its `pauseAfterWords` pauses with that much silence between them; an
 * `audio` turn's leg as given (decoded, resampled, cut to its range). `script` is the turn as the simulated STT
 * hears it: the segments joined by ` | `, so it finalizes each one as a vendor finalizes a stretch of speech
 * followed by a pause.
 */
export interface TurnSpeech {
  pcm: Buffer;
  script: string;
  /** Pauses inside the turn, in ms (a reply before the last segment is a cut-in). */
  pauses: number[];
  /** Length of the last segment's audio, ms. */
  lastSegmentMs: number;
}

/** A local flite voice of the caller (the scenario's `callerVoice`). */
export type CallerVoice = (typeof CALLER_VOICES)[number];

/** Fetches an audio turn's bytes from where it names (a file, a URL, the developer's storage): the host decides. */
export type AudioLoader = (audio: TurnAudio) => Promise<Buffer>;

/** What the caller says in a turn, as written (the words, or an audio leg's transcript). */
export function turnText(turn: ScenarioTurn): string {
  return turn.say ?? turn.audio?.transcript ?? '';
}

export function segments(turn: ScenarioTurn): { words: string[]; pauseMs: number }[] {
  const words = (turn.say ?? '').split(/\s+/).filter(Boolean);
  const out: { words: string[]; pauseMs: number }[] = [];
  let cur: string[] = [];
  words.forEach((w, i) => {
    cur.push(w);
    const pause = turn.pauseAfterWords?.[String(i + 1)];
    if (pause && i < words.length - 1) {
      out.push({ words: cur, pauseMs: pause });
      cur = [];
    }
  });
  out.push({ words: cur, pauseMs: 0 });
  return out;
}

const flited = new Map<string, Buffer>();

/** One utterance in a local flite voice, 8 kHz PCM s16le (cached: scenarios repeat their lines). */
export async function fliteUtterance(text: string, voice: CallerVoice = 'kal'): Promise<Buffer> {
  const key = `${voice}\n${text}`;
  const hit = flited.get(key);
  if (hit) return hit;
  const dir = await mkdtemp(join(tmpdir(), 'agent-test-flite-'));
  try {
    const file = join(dir, 'u.wav');
    await runProcess('flite', ['-voice', voice, '-t', text, '-o', file], { timeoutMs: 30_000 });
    const wav = parseWav(await readFile(file));
    const pcm = resamplePcm(Buffer.from(wav.data), wav.sampleRate, 8000);
    flited.set(key, pcm);
    return pcm;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Decodes an audio leg to 8 kHz mono PCM s16le: PCM or μ-law WAV at any rate (first channel), or raw μ-law. */
export function decodeLeg(bytes: Buffer, audio: Pick<TurnAudio, 'format' | 'startMs' | 'endMs'>): Buffer {
  let pcm: Buffer;
  if (audio.format === 'mulaw') {
    pcm = mulawToPcm(bytes);
  } else {
    const wav = parseWav(bytes);
    let mono: Buffer;
    if (wav.formatTag === 7 && wav.bitsPerSample === 8) {
      mono = mulawToPcm(wav.channels === 1 ? wav.data : wav.data.filter((_, i) => i % wav.channels === 0));
    } else if (wav.formatTag === 1 && wav.bitsPerSample === 16) {
      if (wav.channels === 1) mono = Buffer.from(wav.data);
      else {
        mono = Buffer.alloc((wav.data.length / wav.channels) & ~1);
        for (let i = 0, o = 0; o + 1 < mono.length; i += 2 * wav.channels, o += 2)
          mono.writeInt16LE(wav.data.readInt16LE(i), o);
      }
    } else {
      throw new Error(
        `unsupported WAV encoding (format ${wav.formatTag}, ${wav.bitsPerSample} bit): use 16-bit PCM or μ-law`,
      );
    }
    pcm = resamplePcm(mono, wav.sampleRate, 8000);
  }
  const from = (audio.startMs ?? 0) * 16; // 8 kHz × 2 bytes = 16 bytes per ms
  const to = audio.endMs !== undefined ? audio.endMs * 16 : pcm.length;
  return pcm.subarray(Math.min(from, pcm.length), Math.min(to, pcm.length));
}

export async function turnSpeech(
  turn: ScenarioTurn,
  loadAudio?: AudioLoader,
  voice: CallerVoice = 'kal',
): Promise<TurnSpeech> {
  if (turn.audio) {
    if (!loadAudio) throw new Error('audio turns are not supported here');
    const pcm = decodeLeg(await loadAudio(turn.audio), turn.audio);
    if (pcm.length === 0) throw new Error('the audio turn is empty (check startMs/endMs)');
    return { pcm, script: turn.audio.transcript ?? '', pauses: [], lastSegmentMs: pcm.length / 16 };
  }
  const parts: Buffer[] = [];
  const segs = segments(turn);
  let last: Buffer = Buffer.alloc(0);
  for (const s of segs) {
    last = trimSilence(await fliteUtterance(s.words.join(' '), voice));
    parts.push(last);
    if (s.pauseMs) parts.push(Buffer.alloc(16 * s.pauseMs));
  }
  return {
    pcm: Buffer.concat(parts),
    script: segs.map((s) => s.words.join(' ')).join(' | '),
    pauses: segs.filter((s) => s.pauseMs).map((s) => s.pauseMs),
    lastSegmentMs: last.length / 16,
  };
}

/**
 * Everything the caller says in a scenario, through its handset: each turn's speech (clipped when
 * `impairments.clipPct` says so, before the line's μ-law encoding, as a handset's converter clips), and `voice`,
 * which puts other speech of the caller (backchannels) through the same handset.
 */
export async function callerSpeech(
  scenario: Scenario,
  loadAudio?: AudioLoader,
): Promise<{ turns: TurnSpeech[]; voice: (pcm: Buffer) => Buffer }> {
  const turns: TurnSpeech[] = [];
  for (const turn of scenario.turns) turns.push(await turnSpeech(turn, loadAudio, scenario.callerVoice));
  const pct = scenario.impairments?.clipPct;
  const clip = pct
    ? clipFor(
        turns.map((t) => t.pcm),
        pct,
      )
    : null;
  const voice = (pcm: Buffer) => (clip ? hardClip(pcm, clip) : pcm);
  return { turns: turns.map((t) => ({ ...t, pcm: voice(t.pcm) })), voice };
}
