import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/kernel/config/index.ts';
import { STT_PROVIDERS } from '../../../shared/contracts/providers.ts';
import { EngineRegistry } from '../../../shared/engines/core/registry.ts';
import type { SttEngine } from '../../../shared/engines/stt/types.ts';
import { AssemblyAiStt } from '../../../shared/engines/stt/vendors/assemblyai.ts';
import { DeepgramStt } from '../../../shared/engines/stt/vendors/deepgram.ts';
import { ElevenLabsStt } from '../../../shared/engines/stt/vendors/elevenlabs.ts';
import { registerSttVendors } from '../../../shared/engines/stt/vendors/index.ts';
import { GroqStt, OpenAiStt } from '../../../shared/engines/stt/vendors/openai.ts';
import { languageCode, segmentsFromWords, speakerLabel } from '../../../shared/engines/stt/vendors/words.ts';
import { startAssemblyAiDouble } from '../../../support/doubles/assemblyai.ts';
import { parseWav } from '../../../support/doubles/audio.ts';
import { startDeepgramDouble } from '../../../support/doubles/deepgram.ts';
import { startElevenLabsDouble } from '../../../support/doubles/elevenlabs.ts';
import { formDataOf } from '../../../shared/domains/agent-tests/simulators/http-double.ts';
import { startGroqDouble, startOpenAiDouble } from '../../../support/doubles/openai.ts';
import { sttConformance, type SttVendorCase } from './stt-conformance.ts';

const bearer = (r: { headers: Record<string, unknown> }) => String(r.headers.authorization).replace(/^Bearer /, '');

const cases: SttVendorCase[] = [
  {
    provider: 'deepgram',
    startDouble: startDeepgramDouble,
    make: (baseUrl) => new DeepgramStt({ baseUrl }),
    credential: (r) => String(r.headers.authorization).replace(/^Token /, ''),
    checkRequests([r]) {
      expect(r!.path).toBe('/v1/listen');
      expect(Object.fromEntries(r!.query)).toEqual({
        model: 'nova-3',
        punctuate: 'true',
        smart_format: 'true',
        utterances: 'true',
        language: 'en',
      });
      expect(r!.headers['content-type']).toBe('audio/wav');
      expect(parseWav(r!.body).sampleRate).toBe(16000);
    },
  },
  {
    provider: 'assemblyai',
    startDouble: startAssemblyAiDouble,
    make: (baseUrl) => new AssemblyAiStt({ baseUrl, pollMs: 50 }),
    credential: (r) => r.headers.authorization as string,
    checkRequests(reqs, d) {
      expect(reqs.map((r) => `${r.method} ${r.path.replace(/[0-9a-f]{16}$/, ':id')}`)).toEqual([
        'POST /v2/upload',
        'POST /v2/transcript',
        'GET /v2/transcript/:id',
        'GET /v2/transcript/:id',
      ]);
      expect(d.json(reqs[1])).toMatchObject({ speech_model: 'best', speaker_labels: false, language_code: 'en' });
    },
  },
  {
    provider: 'openai',
    startDouble: () => startOpenAiDouble(),
    make: (baseUrl) => new OpenAiStt({ baseUrl: `${baseUrl}/v1` }),
    credential: bearer,
    async checkRequests([r]) {
      const form = await formDataOf(r!);
      expect(form.get('model')).toBe('whisper-1');
      expect(form.get('response_format')).toBe('verbose_json');
      expect(form.getAll('timestamp_granularities[]')).toEqual(['segment']);
      expect(form.get('language')).toBe('en');
    },
  },
  {
    provider: 'groq',
    startDouble: startGroqDouble,
    make: (baseUrl) => new GroqStt({ baseUrl: `${baseUrl}/openai/v1` }),
    credential: bearer,
    async checkRequests([r]) {
      expect(r!.path).toBe('/openai/v1/audio/transcriptions');
      expect((await formDataOf(r!)).get('model')).toBe('whisper-large-v3');
    },
  },
  {
    provider: 'elevenlabs',
    startDouble: startElevenLabsDouble,
    make: (baseUrl) => new ElevenLabsStt({ baseUrl }),
    credential: (r) => r.headers['xi-api-key'] as string,
    async checkRequests([r]) {
      const form = await formDataOf(r!);
      expect(form.get('model_id')).toBe('scribe_v2');
      expect(form.get('timestamps_granularity')).toBe('word');
      expect(form.get('diarize')).toBe('false');
    },
  },
];

for (const c of cases) sttConformance(c);

describe('STT vendor registration and mapping helpers', () => {
  it('registers every brand-named STT provider of the contract', () => {
    const registry = new EngineRegistry<SttEngine>('stt');
    registerSttVendors(registry, loadConfig({}));
    expect(registry.providers().sort()).toEqual(STT_PROVIDERS.filter((p) => p !== 'default').sort());
    for (const p of registry.providers()) expect(registry.get(p).label).toBe(`${p}.stt`);
  });

  it('normalises speaker labels and language codes', () => {
    expect([speakerLabel(0), speakerLabel('B'), speakerLabel('speaker_3'), speakerLabel(null)]).toEqual([
      'speaker_0',
      'speaker_1',
      'speaker_3',
      undefined,
    ]);
    expect([
      languageCode('english', ''),
      languageCode('eng', ''),
      languageCode('en_us', ''),
      languageCode(null, 'de'),
    ]).toEqual(['en', 'en', 'en', 'de']);
  });

  it('builds segments on speaker changes, pauses and sentence ends', () => {
    const segs = segmentsFromWords([
      { word: 'Hi.', start: 0, end: 0.3, speaker: 'speaker_0' },
      { word: 'How', start: 0.4, end: 0.6, speaker: 'speaker_0' },
      { word: 'are', start: 0.6, end: 0.8, speaker: 'speaker_0' },
      { word: 'Fine', start: 0.9, end: 1.2, speaker: 'speaker_1' },
      { word: 'thanks', start: 3, end: 3.4, speaker: 'speaker_1' },
    ]);
    expect(segs.map((s) => [s.text, s.speaker])).toEqual([
      ['Hi.', 'speaker_0'],
      ['How are', 'speaker_0'],
      ['Fine', 'speaker_1'],
      ['thanks', 'speaker_1'],
    ]);
  });

  it('deepgram: auto-detects language when none is given; diarized utterances carry speakers', async () => {
    const d = await startDeepgramDouble();
    try {
      const e = new DeepgramStt({ baseUrl: d.url });
      const out = await e.transcribe({
        pcm: Buffer.alloc(32000),
        sampleRate: 16000,
        language: '',
        mode: 'fast',
        timestamps: 'segment',
        diarize: true,
        apiKey: d.key,
      });
      expect(d.last().query.get('detect_language')).toBe('true');
      expect(d.last().query.get('diarize')).toBe('true');
      expect(out.segments.map((s) => s.speaker)).toEqual(['speaker_0', 'speaker_1']);
    } finally {
      await d.close();
    }
  });

  it('groq: fast mode uses the turbo model', async () => {
    const d = await startGroqDouble();
    try {
      const e = new GroqStt({ baseUrl: `${d.url}/openai/v1` });
      await e.transcribe({
        pcm: Buffer.alloc(3200),
        sampleRate: 16000,
        language: '',
        mode: 'fast',
        timestamps: 'word',
        diarize: false,
        apiKey: d.key,
      });
      const form = await formDataOf(d.last());
      expect(form.get('model')).toBe('whisper-large-v3-turbo');
      expect(form.getAll('timestamp_granularities[]')).toEqual(['segment', 'word']);
      expect(form.get('language')).toBeNull();
    } finally {
      await d.close();
    }
  });
});
