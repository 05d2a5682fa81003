import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { collect } from '../../shared/kernel/audio/pcm.ts';
import { resamplePcm } from '../../shared/kernel/audio/resampler.ts';
import { PocketsphinxSttEngine } from '../../shared/engines/stt/pocketsphinx.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { startChild } from '../lib/processes.ts';
import { benchDatabase } from '../lib/bench-database.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
/** 20 words. */
const SENTENCE_20 =
  'The quick brown fox jumps over the lazy dog while the farmer watches quietly from the porch of his house.';
const PARAGRAPH = [
  'Please call me back when you get home tonight.',
  'We need to buy milk, bread and eggs from the store.',
  'The train to New York leaves at seven in the evening.',
  'Thank you very much for your help with this project.',
  'Can you tell me the way to the nearest hospital?',
  'The children are playing in the park after school.',
].join(' ');

/**
 * CPU seconds used by this process and its reaped children (flite, pocketsphinx, ffmpeg), from /proc/self/stat
 * (utime, stime, cutime, cstime in clock ticks). Unlike wall time it does not grow when other work shares the
 * cores, so it is the figure to compare with a target on an otherwise idle machine.
 */
function cpuSeconds(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    // After "pid (comm) ", field 3 is index 0: utime is field 14 → index 11, cutime field 16 → 13, cstime 17 → 14.
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  }
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const ms = (v: number) => `${v.toFixed(0).padStart(5)} ms`;
const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

async function ttsRun(tts: LocalTtsEngine, text: string) {
  const t0 = performance.now();
  const a = await tts.synthesize({ text, voiceId: 'default', speed: 1, pitch: 1 });
  let first = 0;
  let bytes = 0;
  for await (const c of a.chunks) {
    if (!first) first = performance.now() - t0;
    bytes += c.length;
  }
  const total = performance.now() - t0;
  return { first, total, audio: bytes / 2 / a.sampleRate };
}

console.log(
  `speech benchmark — ${cpus().length} CPUs, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);

// --- TTS (engine) --------------------------------------------------------------------------------------------
const tts = new LocalTtsEngine();
await ttsRun(tts, 'Warm up.');
const ttfb: number[] = [];
const rtf: number[] = [];
let ttsCpu = 0;
let ttsAudio = 0;
for (let i = 0; i < RUNS; i++) {
  const c0 = cpuSeconds();
  const r = await ttsRun(tts, SENTENCE_20);
  ttsCpu += cpuSeconds() - c0;
  ttsAudio += r.audio;
  ttfb.push(r.first);
  rtf.push(r.total / 1000 / r.audio);
}
const para: number[] = [];
const paraFirst: number[] = [];
for (let i = 0; i < Math.ceil(RUNS / 3); i++) {
  const r = await ttsRun(tts, PARAGRAPH);
  para.push(r.total / 1000 / r.audio);
  paraFirst.push(r.first);
}
console.log('\nTTS default engine (flite, default voice flite-kal16, 16 kHz PCM)');
console.log(
  `  20-word sentence: first chunk p50 ${ms(pct(ttfb, 50))}  p95 ${ms(pct(ttfb, 95))}   RTF p50 ${pct(rtf, 50).toFixed(3)}`,
);
console.log(`  6-sentence paragraph: first chunk p50 ${ms(pct(paraFirst, 50))}   RTF p50 ${pct(para, 50).toFixed(3)}`);
console.log(`  CPU-time RTF (process + children) ${(ttsCpu / ttsAudio).toFixed(3)}`);
console.log(`  first byte p50 ≤ 150 ms: ${verdict(pct(ttfb, 50) <= 150)}`);

// --- STT (engine) --------------------------------------------------------------------------------------------
const stt = new PocketsphinxSttEngine();
const short = resamplePcm(
  await collect((await tts.synthesize({ text: SENTENCE_20, voiceId: 'default', speed: 1, pitch: 1 })).chunks),
  16000,
  16000,
);
const longParts: Buffer[] = [];
for (let i = 0; i < 3; i++) {
  longParts.push(
    await collect((await tts.synthesize({ text: PARAGRAPH, voiceId: 'default', speed: 1, pitch: 1 })).chunks),
  );
  longParts.push(Buffer.alloc(16000));
}
const long = Buffer.concat(longParts);
console.log('\nSTT default engine (pocketsphinx 5prealpha, 16 kHz, process per request incl. model load)');
const sttFigures: Record<string, number> = {};
for (const [name, pcm] of [
  ['short', short],
  ['long', long],
] as const) {
  for (const mode of ['accurate', 'fast'] as const) {
    const runs: number[] = [];
    const cpu: number[] = [];
    const n = name === 'short' ? 5 : 3;
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const c0 = cpuSeconds();
      await stt.transcribe({ pcm, sampleRate: 16000, language: 'en', mode, timestamps: 'word', diarize: false });
      runs.push((performance.now() - t0) / 1000 / (pcm.length / 32000));
      cpu.push((cpuSeconds() - c0) / (pcm.length / 32000));
    }
    sttFigures[`${name}-${mode}`] = pct(cpu, 50);
    console.log(
      `  ${name.padEnd(5)} (${(pcm.length / 32000).toFixed(1).padStart(5)} s audio) ${mode.padEnd(8)} wall RTF p50 ${pct(runs, 50).toFixed(3)}  CPU-time RTF p50 ${pct(cpu, 50).toFixed(3)}`,
    );
  }
}
console.log(
  `  CPU-time RTF ≤ 0.5, accurate (short / long): ${verdict(sttFigures['short-accurate']! <= 0.5)} / ${verdict(sttFigures['long-accurate']! <= 0.5)}`,
);
console.log(
  `  CPU-time RTF ≤ 0.5, fast (short / long):     ${verdict(sttFigures['short-fast']! <= 0.5)} / ${verdict(sttFigures['long-fast']! <= 0.5)}`,
);
console.log('  (wall RTF equals CPU-time RTF on an idle machine: the decoder is single-threaded)');

// --- /v1/synthesize over HTTP --------------------------------------------------------------------------------
const { dbUrl, apiKey: key, s3dir, drop } = await benchDatabase('scale');
const port = String(20_000 + Math.floor(Math.random() * 20_000));
const platform = await startChild(
  ['scripts/start.ts', 'api'],
  {
    PORT: port,
    HOST: '127.0.0.1',
    DATABASE_URL: dbUrl,
    REDIS_PREFIX: `bench${randomBytes(3).toString('hex')}`,
    S3_EMBEDDED_DIR: s3dir,
    S3_EMBEDDED_PORT: '0',
    LOG_LEVEL: 'warn',
    RATE_LIMITS: 'starter:100000000,pro:100000000,scale:100000000',
    TIER_SCALE_MONTHLY_CREDITS: '1000000000',
  },
  (o) => o.includes('platform is up') || o.includes('Voice Agent Platform is up'),
);
try {
  console.log('\nPOST /v1/synthesize, 20-word sentence, sequential requests');
  for (const format of ['wav', 'mp3'] as const) {
    const first: number[] = [];
    const total: number[] = [];
    for (let i = 0; i < RUNS + 2; i++) {
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/v1/synthesize`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: SENTENCE_20, format }),
      });
      if (res.status !== 200) throw new Error(`synthesize answered ${res.status}: ${await res.text()}`);
      const reader = res.body!.getReader();
      let t1 = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (value && !t1) t1 = performance.now() - t0;
        if (done) break;
      }
      if (i < 2) continue; // warm-up
      first.push(t1);
      total.push(performance.now() - t0);
    }
    console.log(
      `  ${format}: first byte p50 ${ms(pct(first, 50))} p95 ${ms(pct(first, 95))}   complete p50 ${ms(pct(total, 50))} p95 ${ms(pct(total, 95))}`,
    );
  }
} finally {
  await platform.stop();
  await drop();
}
