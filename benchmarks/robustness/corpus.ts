import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pcmToInt16 } from '../../shared/kernel/audio/pcm.ts';
import { resamplePcm } from '../../shared/kernel/audio/resampler.ts';
import { trimSilence } from '../../shared/kernel/audio/trim-silence.ts';
import { parseWav } from '../../shared/kernel/audio/wav.ts';
import { debianSourceFiles } from '../lib/debian-source.ts';

const run = promisify(execFile);

/** One caller turn: 8 kHz samples and what is said in them. */
export interface Utterance {
  id: string;
  /** Who speaks: a real reader (LibriVox, pocketsphinx's own recordings) or a flite voice. */
  source: 'librivox' | 'cards' | 'flite';
  samples: Int16Array;
  /** The same at 16 kHz, the direct protocol's rate (the local STT's model is wideband: it needs it). */
  samples16: Int16Array;
  text: string;
}

const RATE = 8000;
const SPHINX_PATHS = ['test/data/librivox', 'test/data/cards'];

/** `<s> words </s> (id)` lines of a sphinx transcription file. */
function transcripts(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^<s>\s*(.*?)\s*<\/s>\s*\((.+)\)\s*$/.exec(line.trim());
    if (m) out.set(m[2]!, m[1]!.replace(/\s+/g, ' '));
  }
  return out;
}

/** A WAV file at 8 and 16 kHz, its near-silent ends cut off (flite pads each phrase). */
async function wav(file: string): Promise<{ samples: Int16Array; samples16: Int16Array }> {
  const w = parseWav(await readFile(file));
  const at16 = trimSilence(resamplePcm(Buffer.from(w.data), w.sampleRate, 16000));
  return { samples: pcmToInt16(resamplePcm(at16, 16000, RATE)), samples16: pcmToInt16(at16) };
}

/**
 * Real read speech: the five LibriVox sentences (one reader, a 64 kb/s MP3 made WAV) and the five card-reading
 * recordings (several people, pauses between cards) that pocketsphinx's Debian source package carries as test data.
 */
export async function realSpeech(signal?: AbortSignal): Promise<Utterance[]> {
  const dir = await debianSourceFiles('pocketsphinx', SPHINX_PATHS, signal);
  const out: Utterance[] = [];
  const libri = join(dir, 'test/data/librivox');
  for (const [id, text] of transcripts(await readFile(join(libri, 'transcription'), 'utf8')))
    out.push({ id, source: 'librivox', ...(await wav(join(libri, `${id}.wav`))), text });
  const cards = join(dir, 'test/data/cards');
  for (const [id, text] of transcripts(await readFile(join(cards, 'cards.transcription'), 'utf8')))
    out.push({ id: `cards-${id}`, source: 'cards', ...(await wav(join(cards, `${id}.wav`))), text });
  return out;
}

/**
 * Caller sentences in four flite voices, each said as two phrases with a 250 ms pause between them (shorter than
 * the 300 ms endpointing window: a turn that ends there was cut by the line, not by the caller).
 */
const FLITE_LINES: Array<[string, string]> = [
  ['I would like to book a cleaning', 'for next Tuesday morning please'],
  ['my account number is four one five', 'five five five two three six eight'],
  ['could you tell me', 'what time you close on Saturday'],
  ['I called yesterday about my bill', 'and nobody called me back'],
];
const FLITE_VOICES = ['kal', 'slt', 'awb', 'rms'];
const FLITE_PAUSE_MS = 250;

async function flite(text: string, voice: string): Promise<{ samples: Int16Array; samples16: Int16Array }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-flite-'));
  try {
    const file = join(dir, 'u.wav');
    await run('flite', ['-voice', voice, '-t', text, '-o', file]);
    return await wav(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function fliteSpeech(): Promise<Utterance[]> {
  const out: Utterance[] = [];
  for (let i = 0; i < FLITE_LINES.length; i++) {
    const [a, b] = FLITE_LINES[i]!;
    const voice = FLITE_VOICES[i % FLITE_VOICES.length]!;
    const [x, y] = [await flite(a, voice), await flite(b, voice)];
    const join2 = (p: Int16Array, q: Int16Array, rate: number) => {
      const joined = new Int16Array(p.length + (FLITE_PAUSE_MS * rate) / 1000 + q.length);
      joined.set(p);
      joined.set(q, joined.length - q.length);
      return joined;
    };
    out.push({
      id: `flite-${voice}-${i}`,
      source: 'flite',
      samples: join2(x.samples, y.samples, RATE),
      samples16: join2(x.samples16, y.samples16, 16000),
      text: `${a} ${b}`,
    });
  }
  return out;
}
