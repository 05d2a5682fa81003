// CPU of the per-frame work of live calls, measured in-process with process.cpuUsage, so that two trees can be
// compared on a busy machine where the whole benchmark's figures move with the load (README, 2026-11-29 13:00):
//
//   npx tsx benchmarks/voice-latency/hot-path.ts [--root DIR] [--calls N] [--seconds S]
//
// --root is the tree whose code is measured (default: this one), e.g. a worktree of the commit before a change.
// Measured: decoding Twilio media messages (from the socket's Buffer), Silero VAD scoring with N calls pushing a
// frame at once (the frames a round of the event loop holds), and resampling flite's 16 kHz to the line's 8 kHz.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type * as SileroModule from '../../shared/engines/vad/silero.ts';
import type * as MulawModule from '../../shared/kernel/audio/mulaw.ts';
import { pcmToInt16 } from '../../shared/kernel/audio/pcm.ts';
import type * as ResamplerModule from '../../shared/kernel/audio/resampler.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: resolve(import.meta.dirname, '../..') },
    calls: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '10' },
  },
});
const root = resolve(values.root);
const CALLS = Number(values.calls);
const SECONDS = Number(values.seconds);

type Mulaw = typeof MulawModule;
/** The realtime role is loaded only by dynamic import (role boundaries): its one function used here. */
type Serializer = { parseTwilioMessage(data: Buffer, isBinary: boolean): unknown };
type Silero = typeof SileroModule;
type Resampling = typeof ResamplerModule;

const { pcmToMulaw } = (await import(`${root}/shared/kernel/audio/mulaw.ts`)) as Mulaw;
const { parseTwilioMessage } = (await import(`${root}/workers/realtime/twilio/serializer.ts`)) as Serializer;
const { SileroVad } = (await import(`${root}/shared/engines/vad/silero.ts`)) as Silero;
const { Resampler } = (await import(`${root}/shared/kernel/audio/resampler.ts`)) as Resampling;

/** Deterministic voiced-tone-and-noise signal (Twilio frames and the TTS resampling input). */
function signal(samples: number, seed: number): Int16Array {
  const out = new Int16Array(samples);
  let s = seed;
  for (let i = 0; i < samples; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const env = 0.5 + 0.5 * Math.sin(i / 800 + seed);
    out[i] = Math.round(env * (Math.sin(i / (6 + (seed % 5))) * 9000 + ((s / 0x7fffffff) * 2 - 1) * 2500));
  }
  return out;
}

function cpuMs(fn: () => void): number {
  const t = process.cpuUsage();
  fn();
  const u = process.cpuUsage(t);
  return (u.user + u.system) / 1000;
}

async function cpuMsAsync(fn: () => Promise<void>): Promise<number> {
  const t = process.cpuUsage();
  await fn();
  const u = process.cpuUsage(t);
  return (u.user + u.system) / 1000;
}

// 1. Twilio media messages: SECONDS of one call's 20 ms frames, as the socket hands them over (Buffers).
const frames: Buffer[] = [];
for (let i = 0; i < SECONDS * 50; i++) {
  const pcm = Buffer.from(signal(160, i).buffer);
  frames.push(
    Buffer.from(
      JSON.stringify({
        event: 'media',
        sequenceNumber: String(i + 2),
        media: {
          track: 'inbound',
          chunk: String(i + 1),
          timestamp: String(i * 20),
          payload: pcmToMulaw(pcm).toString('base64'),
        },
        streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
      }),
    ),
  );
}
let sink = 0;
const decode = () => {
  for (const f of frames) sink += (parseTwilioMessage(f, false) as { timestampMs: number }).timestampMs;
};
for (let w = 0; w < 20; w++) decode();
const decodeRuns = 200;
const decodeMs = cpuMs(() => {
  for (let r = 0; r < decodeRuns; r++) decode();
});

// 2. Silero at 8 kHz: n sessions each push their next 32 ms frame at once (a round of the event loop holding n
// calls' frames; the 50-call benchmark averaged about 2.2), over flite speech with pauses. The first row warms up.
const vad = new SileroVad().atRate(8000)!;
await vad.session().push(new Int16Array(vad.frameSamples)); // loads the model
const speechPcm = pcmToInt16(await fliteUtterance('I would like to come in this week because my tooth hurts', 8000));
const perCall = Math.floor((SECONDS * 8000) / vad.frameSamples);
const vadRows: string[] = [];
for (const n of [CALLS, 4, 2, 1, CALLS]) {
  const audio = Array.from({ length: n }, (_, c) => {
    const a = new Int16Array(perCall * vad.frameSamples);
    for (let o = (c * 797) % speechPcm.length; o < a.length; o += speechPcm.length + 4000)
      a.set(speechPcm.subarray(0, Math.min(speechPcm.length, a.length - o)), o);
    return a;
  });
  const sessions = audio.map(() => vad.session());
  let speech = 0;
  const ms = await cpuMsAsync(async () => {
    for (let i = 0; i < perCall; i++) {
      const probs = await Promise.all(
        sessions.map((s, c) => s.push(audio[c]!.slice(i * vad.frameSamples, (i + 1) * vad.frameSamples))),
      );
      for (const p of probs) if (p > 0.5) speech++;
    }
  });
  if (vadRows.length === 0 && n === CALLS) {
    vadRows.push('');
    continue;
  }
  vadRows.push(
    `silero 8 kHz, ${n} call(s) at once: ${((ms * 1000) / (perCall * n)).toFixed(1)} µs per frame ` +
      `(${perCall * n} frames, ${((100 * speech) / (perCall * n)).toFixed(0)} % speech)`,
  );
}

// 3. flite's 16 kHz to the line's 8 kHz, in the 4096-byte pieces the TTS stage gets.
const tts = signal(16000 * SECONDS, 99);
const resampleMs = cpuMs(() => {
  for (let r = 0; r < 5; r++) {
    const rs = new Resampler(16000, 8000);
    for (let o = 0; o < tts.length; o += 2048) sink += rs.process(tts.subarray(o, o + 2048)).length;
    sink += rs.flush().length;
  }
});

console.log(`hot-path: ${root}`);
console.log(`twilio media decode: ${((decodeMs * 1000) / (decodeRuns * frames.length)).toFixed(2)} µs per frame`);
for (const row of vadRows.slice(1)) console.log(row);
console.log(`resample 16 → 8 kHz: ${(resampleMs / 5 / SECONDS).toFixed(3)} ms per second of audio`);
if (sink === -1) console.log(sink);
