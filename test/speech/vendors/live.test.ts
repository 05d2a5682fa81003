import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/kernel/config/index.ts';
import { vendorEnvName } from '../../../shared/kernel/config/areas/providers.ts';
import { EngineRegistry } from '../../../shared/engines/core/registry.ts';
import type { SttEngine, SttStreamEvent } from '../../../shared/engines/stt/types.ts';
import { registerSttVendors } from '../../../shared/engines/stt/vendors/index.ts';
import type { TtsEngine } from '../../../shared/engines/tts/types.ts';
import { registerTtsVendors } from '../../../shared/engines/tts/vendors/index.ts';
import { parseWav } from '../../../support/doubles/audio.ts';
import { collect, ttsRequest } from './conformance.ts';

/**
 * Against the live vendors, each only when its key is in the environment (`ELEVENLABS_API_KEY`, …; PlayHT as
 * `userId:secret`, Polly as `ACCESS_KEY_ID:SECRET[:REGION]`, Azure as `[region:]key`). Skipped otherwise.
 * `<VENDOR>_BASE_URL` is honoured as in production.
 */
const config = loadConfig(process.env);
const tts = new EngineRegistry<TtsEngine>('tts');
registerTtsVendors(tts, config);
const stt = new EngineRegistry<SttEngine>('stt');
registerSttVendors(stt, config);
const keyOf = (vendor: string) => process.env[vendorEnvName(vendor, 'API_KEY')];

/** Real speech for the STT calls: flite's voice saying a known sentence, 16 kHz mono. */
function speech(sampleRate: number): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'vendor-live-'));
  try {
    const raw = join(dir, 'raw.wav');
    const out = join(dir, 'out.wav');
    execFileSync('flite', ['-t', 'The quick brown fox jumps over the lazy dog.', '-o', raw]);
    execFileSync('ffmpeg', ['-loglevel', 'error', '-y', '-i', raw, '-ac', '1', '-ar', String(sampleRate), out]);
    return parseWav(readFileSync(out)).pcm;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('live TTS vendors (keys from the environment)', () => {
  for (const provider of tts.providers()) {
    it.skipIf(!keyOf(provider))(`${provider}: synthesizes real speech`, async () => {
      const audio = await tts
        .get(provider)
        .synthesize(ttsRequest({ text: 'Hello from the live test.', apiKey: keyOf(provider) }));
      const pcm = Buffer.concat(await collect(audio.chunks));
      expect(pcm.length / 2 / audio.sampleRate).toBeGreaterThan(0.3);
    });
  }
});

describe('live STT vendors (keys from the environment)', () => {
  for (const provider of stt.providers()) {
    it.skipIf(!keyOf(provider))(`${provider}: transcribes real speech`, async () => {
      const out = await stt.get(provider).transcribe({
        pcm: speech(16000),
        sampleRate: 16000,
        language: 'en',
        mode: 'accurate',
        timestamps: 'word',
        diarize: false,
        apiKey: keyOf(provider),
      });
      expect(out.text.toLowerCase()).toContain('fox');
      expect(out.words?.length).toBeGreaterThan(3);
    });
  }

  for (const provider of stt.providers().filter((p) => stt.get(p).capabilities.streaming)) {
    it.skipIf(!keyOf(provider))(`${provider}: live-streams 8 kHz phone audio`, async () => {
      const s = stt.get(provider).stream({ sampleRate: 8000, language: 'en', apiKey: keyOf(provider) });
      const events: SttStreamEvent[] = [];
      const done = (async () => {
        for await (const e of s.events) events.push(e);
      })();
      const pcm = Buffer.concat([speech(8000), Buffer.alloc(16000)]); // a second of silence ends the turn
      for (let i = 0; i < pcm.length; i += 320) s.write(pcm.subarray(i, i + 320));
      s.end();
      await done;
      const finals = events.filter((e) => e.type === 'final').map((e) => e.text.toLowerCase());
      expect(finals.join(' ')).toContain('fox');
    });
  }
});
