import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { PocketsphinxSttEngine } from '../../shared/engines/stt/pocketsphinx.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { RhvoiceTtsEngine } from '../../shared/engines/tts/rhvoice.ts';
import type { TtsEngine } from '../../shared/engines/tts/types.ts';
import { collect } from '../../shared/kernel/audio/pcm.ts';
import { resamplePcm } from '../../shared/kernel/audio/resampler.ts';
import { ROUND_TRIP_SENTENCES } from '../../support/helpers/round-trip.ts';
import { countWordErrors } from '../../shared/kernel/text/word-errors.ts';

/**
 * RHVoice (`rhvoice`, opt-in) against flite (`default`), engine level, both on their long-lived worker pools:
 * time to first audio for one sentence, CPU seconds per second of speech (the workers' CPU, read from /proc), and
 * intelligibility to the local recogniser (pocketsphinx `accurate`, word error over 20 sentences). Figures in
 * benchmarks/speech/README.md and docs/speech.md. Needs `RHVOICE=1 scripts/setup.sh`; no database.
 *
 *   npm run bench:speech:rhvoice        # BENCH_RUNS=10 first-audio runs a voice (default)
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const SENTENCE = 'The quick brown fox jumps over the lazy dog while the farmer watches from the porch.';
/** The ten round-trip sentences of the tests, and ten more of the same kind: 20 sentences, 196 words. */
const SENTENCES = [
  ...ROUND_TRIP_SENTENCES,
  'the meeting has been moved to thursday morning at ten',
  'please send me the report before the end of the week',
  'how much does it cost to fly to chicago in june',
  'i lost my keys somewhere between the office and the car',
  'the doctor said i should drink more water every day',
  'could you speak a little more slowly please',
  'our new office is on the third floor of the building',
  'the package will arrive on monday or tuesday next week',
  'she reads a book every night before going to sleep',
  'we are going to the beach if the weather is good',
];

/** CPU seconds of this process's children (the synthesis workers), from /proc; they are never reaped while alive. */
function childrenCpuSeconds(): number {
  let ticks = 0;
  for (const task of readdirSync('/proc/self/task')) {
    let children: string[] = [];
    try {
      children = readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    } catch {
      continue;
    }
    for (const pid of children) {
      try {
        const f = readFileSync(`/proc/${pid}/stat`, 'latin1');
        const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
        ticks += Number(rest[11]) + Number(rest[12]);
      } catch {
        // exited between the listing and the read
      }
    }
  }
  return ticks / 100;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

async function firstAudio(tts: TtsEngine, voiceId: string): Promise<{ first: number; audio: number }> {
  const t0 = performance.now();
  const a = await tts.synthesize({ text: SENTENCE, voiceId, speed: 1, pitch: 1 });
  let first = 0;
  let bytes = 0;
  for await (const c of a.chunks) {
    first ||= performance.now() - t0;
    bytes += c.length;
  }
  return { first, audio: bytes / 2 / a.sampleRate };
}

async function main(): Promise<void> {
  if (!RhvoiceTtsEngine.installed()) {
    console.error('RHVoice is not installed: RHVOICE=1 scripts/setup.sh installs it');
    process.exit(2);
  }
  const flite = new LocalTtsEngine();
  const rhvoice = new RhvoiceTtsEngine();
  const stt = new PocketsphinxSttEngine();
  const voices: Array<[TtsEngine, string]> = [
    [flite, 'flite-kal16'],
    [flite, 'flite-slt'],
    [rhvoice, 'rhvoice-slt'],
    [rhvoice, 'rhvoice-clb'],
    [rhvoice, 'rhvoice-bdl'],
    [rhvoice, 'rhvoice-alan'],
  ];
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; ${RUNS} runs a voice`,
  );
  console.log('voice          first audio p50 / p95   CPU-s per s of speech   WER (20 sentences)');
  for (const [tts, voiceId] of voices) {
    await firstAudio(tts, voiceId); // warm: the worker has started and loaded the voice
    const firsts: number[] = [];
    let audio = 0;
    const cpu0 = childrenCpuSeconds();
    for (let i = 0; i < RUNS; i++) {
      const r = await firstAudio(tts, voiceId);
      firsts.push(r.first);
      audio += r.audio;
    }
    const cpuPerSecond = (childrenCpuSeconds() - cpu0) / audio;
    let errors = 0;
    let total = 0;
    for (const text of SENTENCES) {
      const a = await tts.synthesize({ text, voiceId, speed: 1, pitch: 1 });
      const pcm = resamplePcm(await collect(a.chunks), a.sampleRate, 16000);
      const heard = await stt.transcribe({
        pcm,
        sampleRate: 16000,
        language: 'en',
        mode: 'accurate',
        timestamps: 'segment',
        diarize: false,
      });
      const count = countWordErrors(text, heard.text);
      errors += count.errors;
      total += count.words;
    }
    console.log(
      `${voiceId.padEnd(14)} ${pct(firsts, 0.5).toFixed(0).padStart(5)} / ${pct(firsts, 0.95).toFixed(0).padStart(5)} ms` +
        `   ${cpuPerSecond.toFixed(3).padStart(10)}              ${((100 * errors) / total).toFixed(1)} % (${errors}/${total})`,
    );
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  flite.close();
  rhvoice.close();
}

await main();
