import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/kernel/config/index.ts';
import { EngineRegistry } from '../../../shared/engines/core/registry.ts';
import type { TtsEngine } from '../../../shared/engines/tts/types.ts';
import { AzureTts, azureSsml } from '../../../shared/engines/tts/vendors/azure.ts';
import { CartesiaTts } from '../../../shared/engines/tts/vendors/cartesia.ts';
import { DeepgramTts } from '../../../shared/engines/tts/vendors/deepgram.ts';
import { ElevenLabsTts } from '../../../shared/engines/tts/vendors/elevenlabs.ts';
import { GoogleTts } from '../../../shared/engines/tts/vendors/google.ts';
import { HumeTts } from '../../../shared/engines/tts/vendors/hume.ts';
import { registerTtsVendors } from '../../../shared/engines/tts/vendors/index.ts';
import { LmntTts } from '../../../shared/engines/tts/vendors/lmnt.ts';
import { OpenAiTts } from '../../../shared/engines/tts/vendors/openai.ts';
import { PlayHtTts } from '../../../shared/engines/tts/vendors/playht.ts';
import { PollyTts } from '../../../shared/engines/tts/vendors/polly.ts';
import { ReplicateTts } from '../../../shared/engines/tts/vendors/replicate.ts';
import { RimeTts } from '../../../shared/engines/tts/vendors/rime.ts';
import { LOCAL_TTS_PROVIDERS, TTS_PROVIDERS } from '../../../shared/contracts/providers.ts';
import { startAzureDouble } from '../../../support/doubles/azure.ts';
import { startCartesiaDouble } from '../../../support/doubles/cartesia.ts';
import { startDeepgramDouble } from '../../../support/doubles/deepgram.ts';
import { startElevenLabsDouble } from '../../../support/doubles/elevenlabs.ts';
import { startGoogleDouble } from '../../../support/doubles/google.ts';
import { startHumeDouble } from '../../../support/doubles/hume.ts';
import { startLmntDouble } from '../../../support/doubles/lmnt.ts';
import { startOpenAiDouble } from '../../../support/doubles/openai.ts';
import { startPlayHtDouble } from '../../../support/doubles/playht.ts';
import { startPollyDouble } from '../../../support/doubles/polly.ts';
import { startReplicateDouble } from '../../../support/doubles/replicate.ts';
import { startRimeDouble } from '../../../support/doubles/rime.ts';
import { collect, ttsConformance, ttsRequest, type TtsVendorCase } from './conformance.ts';

const cases: TtsVendorCase[] = [
  {
    provider: 'elevenlabs',
    startDouble: startElevenLabsDouble,
    make: (baseUrl) => new ElevenLabsTts({ baseUrl }),
    credential: (r) => r.headers['xi-api-key'] as string,
    checkRequest(r, d) {
      expect(r.path).toBe('/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream');
      expect(r.query.get('output_format')).toBe('pcm_24000');
      expect(d.json(r)).toMatchObject({ text: 'Hello from the conformance suite.', model_id: 'eleven_flash_v2_5' });
    },
  },
  {
    provider: 'cartesia',
    startDouble: startCartesiaDouble,
    make: (baseUrl) => new CartesiaTts({ baseUrl }),
    credential: (r) => r.headers['x-api-key'] as string,
    checkRequest(r, d) {
      expect(r.headers['cartesia-version']).toBe('2025-04-16');
      expect(d.json(r)).toMatchObject({
        model_id: 'sonic-3',
        voice: { mode: 'id' },
        output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 },
      });
    },
  },
  {
    provider: 'deepgram',
    startDouble: startDeepgramDouble,
    make: (baseUrl) => new DeepgramTts({ baseUrl }),
    credential: (r) => String(r.headers.authorization).replace(/^Token /, ''),
    checkRequest(r) {
      expect(r.path).toBe('/v1/speak');
      expect(Object.fromEntries(r.query)).toEqual({
        model: 'aura-2-thalia-en',
        encoding: 'linear16',
        container: 'none',
        sample_rate: '24000',
      });
    },
  },
  {
    provider: 'openai',
    startDouble: () => startOpenAiDouble(),
    make: (baseUrl) => new OpenAiTts({ baseUrl: `${baseUrl}/v1` }),
    credential: (r) => String(r.headers.authorization).replace(/^Bearer /, ''),
    checkRequest(r, d) {
      expect(d.json(r)).toEqual({
        model: 'gpt-4o-mini-tts',
        input: 'Hello from the conformance suite.',
        voice: 'alloy',
        response_format: 'pcm',
      });
    },
  },
  {
    provider: 'azure',
    startDouble: startAzureDouble,
    make: (baseUrl) => new AzureTts({ baseUrl }),
    credential: (r) => r.headers['ocp-apim-subscription-key'] as string,
    checkRequest(r) {
      expect(r.headers['x-microsoft-outputformat']).toBe('raw-24khz-16bit-mono-pcm');
      expect(r.body.toString()).toContain('<voice name="en-US-JennyNeural">Hello from the conformance suite.</voice>');
    },
  },
  {
    provider: 'google',
    startDouble: startGoogleDouble,
    make: (baseUrl) => new GoogleTts({ baseUrl }),
    credential: (r) => r.query.get('key') ?? undefined,
    checkRequest(r, d) {
      expect(d.json(r)).toMatchObject({
        input: { text: 'Hello from the conformance suite.' },
        voice: { languageCode: 'en-US', name: 'en-US-Neural2-F' },
        audioConfig: { audioEncoding: 'LINEAR16', sampleRateHertz: 24000 },
      });
    },
  },
  {
    provider: 'polly',
    startDouble: () => startPollyDouble('eu-west-1'),
    make: (baseUrl) => new PollyTts({ baseUrl }),
    checkRequest(r, d) {
      // The double already verified the SigV4 signature with the AWS SDK's signer.
      expect(String(r.headers.authorization)).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDDOUBLE\/\d{8}\/eu-west-1\/polly\/aws4_request, /,
      );
      expect(d.json(r)).toEqual({
        Engine: 'neural',
        OutputFormat: 'pcm',
        SampleRate: '16000',
        Text: 'Hello from the conformance suite.',
        TextType: 'text',
        VoiceId: 'Joanna',
      });
    },
  },
  {
    provider: 'playht',
    startDouble: startPlayHtDouble,
    make: (baseUrl) => new PlayHtTts({ baseUrl }),
    credential: (r) => `${String(r.headers['x-user-id'])}:${String(r.headers.authorization)}`,
    checkRequest(r, d) {
      expect(d.json(r)).toMatchObject({ voice_engine: 'Play3.0-mini', output_format: 'wav', sample_rate: 24000 });
    },
  },
  {
    provider: 'rime',
    startDouble: startRimeDouble,
    make: (baseUrl) => new RimeTts({ baseUrl }),
    credential: (r) => String(r.headers.authorization).replace(/^Bearer /, ''),
    checkRequest(r, d) {
      expect(r.headers.accept).toBe('audio/pcm');
      expect(d.json(r)).toMatchObject({ speaker: 'cove', modelId: 'mistv2', samplingRate: 24000, speedAlpha: 1 });
    },
  },
  {
    provider: 'lmnt',
    startDouble: startLmntDouble,
    make: (baseUrl) => new LmntTts({ baseUrl }),
    credential: (r) => r.headers['x-api-key'] as string,
    checkRequest(r, d) {
      expect(d.json(r)).toMatchObject({ voice: 'leah', format: 'pcm_s16le', sample_rate: 24000, model: 'blizzard' });
    },
  },
  {
    provider: 'hume',
    startDouble: startHumeDouble,
    make: (baseUrl) => new HumeTts({ baseUrl }),
    credential: (r) => r.headers['x-hume-api-key'] as string,
    checkRequest(r, d) {
      expect(d.json(r)).toEqual({
        utterances: [{ text: 'Hello from the conformance suite.', voice: { name: 'Ava Song', provider: 'HUME_AI' } }],
        format: { type: 'pcm' },
        instant_mode: true,
        strip_headers: true,
      });
    },
  },
  {
    provider: 'replicate',
    startDouble: startReplicateDouble,
    make: (baseUrl) => new ReplicateTts({ baseUrl, pollMs: 50 }),
    credential: (r) => String(r.headers.authorization).replace(/^Bearer /, ''),
    checkRequest(r, d) {
      expect(r.path).toBe('/v1/models/minimax/speech-02-turbo/predictions');
      expect(d.json(r)).toEqual({ input: { text: 'Hello from the conformance suite.', voice_id: 'Wise_Woman' } });
      // created → polled until succeeded → output file fetched without auth
      const paths = d.requests
        .slice(d.requests.indexOf(r))
        .map((x) => `${x.method} ${x.path.replace(/[0-9a-f]{16}/, ':id')}`);
      expect(paths).toEqual([
        'POST /v1/models/minimax/speech-02-turbo/predictions',
        'GET /v1/predictions/:id',
        'GET /v1/predictions/:id',
        'GET /files/:id.wav',
      ]);
    },
  },
];

for (const c of cases) ttsConformance(c);

describe('TTS vendor registration', () => {
  it('registers every brand-named TTS provider of the contract, with base URLs from config', () => {
    const registry = new EngineRegistry<TtsEngine>('tts');
    registerTtsVendors(registry, loadConfig({ ELEVENLABS_BASE_URL: 'http://127.0.0.1:1234' }));
    expect(registry.providers().sort()).toEqual(TTS_PROVIDERS.filter((p) => !LOCAL_TTS_PROVIDERS.includes(p)).sort());
    for (const p of registry.providers()) expect(registry.get(p).label).toBe(`${p}.tts`);
  });

  it('constructors reject bad options at start-up', () => {
    expect(() => new ElevenLabsTts({ baseUrl: 'not a url' })).toThrow(/base URL/);
    expect(() => new ElevenLabsTts({ sampleRate: 12345 as never })).toThrow(/sample rate/);
    expect(() => new PollyTts({ sampleRate: 24000 as never })).toThrow(/8000 or 16000/);
    expect(() => new ReplicateTts({ model: 'nope' })).toThrow(/owner\/name/);
  });
});

describe('vendor-specific request mapping', () => {
  it('elevenlabs: voice, language and clamped speed', async () => {
    const d = await startElevenLabsDouble();
    try {
      const e = new ElevenLabsTts({ baseUrl: d.url });
      await collect(
        (await e.synthesize(ttsRequest({ apiKey: d.key, voiceId: 'pNInz6obpgDQGcFmaJgB', speed: 2, language: 'de' })))
          .chunks,
      );
      expect(d.last().path).toBe('/v1/text-to-speech/pNInz6obpgDQGcFmaJgB/stream');
      expect(d.json()).toMatchObject({ language_code: 'de', voice_settings: { speed: 1.2 } });
    } finally {
      await d.close();
    }
  });

  it('cartesia and deepgram answer at the rate the caller plays (8 kHz on a phone line), else their own', async () => {
    for (const [start, make] of [
      [startCartesiaDouble, (url: string) => new CartesiaTts({ baseUrl: url })],
      [startDeepgramDouble, (url: string) => new DeepgramTts({ baseUrl: url })],
    ] as const) {
      const d = await start();
      try {
        const e = make(d.url);
        const phone = await e.synthesize(ttsRequest({ apiKey: d.key, sampleRate: 8000 }));
        const pcm = Buffer.concat(await collect(phone.chunks));
        expect(phone.sampleRate).toBe(8000);
        expect(JSON.stringify(d.json()) + d.last().query.toString()).toMatch(/"sample_rate":8000|sample_rate=8000/);
        expect(pcm.length).toBeGreaterThan(0);
        const odd = await e.synthesize(ttsRequest({ apiKey: d.key, sampleRate: 11025 }));
        await collect(odd.chunks);
        expect(odd.sampleRate).toBe(24000);
      } finally {
        await d.close();
      }
    }
  });

  it('rime: speedAlpha is the inverse of speed; language in three letters', async () => {
    const d = await startRimeDouble();
    try {
      const e = new RimeTts({ baseUrl: d.url });
      await collect((await e.synthesize(ttsRequest({ apiKey: d.key, speed: 1.25, language: 'es' }))).chunks);
      expect(d.json()).toMatchObject({ speedAlpha: 0.8, lang: 'spa' });
    } finally {
      await d.close();
    }
  });

  it('azure: SSML escapes text and carries rate and pitch; a <region>:<key> key picks the region', async () => {
    expect(azureSsml('a < b & "c"', 'en-GB-RyanNeural', 1.5, 0.8)).toBe(
      '<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en-GB">' +
        '<voice name="en-GB-RyanNeural"><prosody rate="+50%" pitch="-20%">a &lt; b &amp; &quot;c&quot;</prosody></voice></speak>',
    );
    const d = await startAzureDouble();
    try {
      // With a base URL configured the key's region prefix is only stripped.
      const e = new AzureTts({ baseUrl: d.url });
      await collect((await e.synthesize(ttsRequest({ apiKey: `westeurope:${d.key}` }))).chunks);
      expect(d.last().headers['ocp-apim-subscription-key']).toBe(d.key);
    } finally {
      await d.close();
    }
  });

  it('google: pitch in semitones and speakingRate', async () => {
    const d = await startGoogleDouble();
    try {
      const e = new GoogleTts({ baseUrl: d.url });
      const audio = await e.synthesize(ttsRequest({ apiKey: d.key, pitch: 2, speed: 1.5 }));
      expect(audio.sampleRate).toBe(24000);
      await collect(audio.chunks);
      expect(d.json()).toMatchObject({ audioConfig: { pitch: 12, speakingRate: 1.5 } });
    } finally {
      await d.close();
    }
  });

  it('polly: speed becomes SSML prosody; the region comes from the key', async () => {
    const d = await startPollyDouble('ap-southeast-2');
    try {
      const e = new PollyTts({ baseUrl: d.url });
      await collect((await e.synthesize(ttsRequest({ apiKey: d.key, speed: 1.5, text: 'Tom & Jerry' }))).chunks);
      expect(d.json()).toMatchObject({
        TextType: 'ssml',
        Text: '<speak><prosody rate="150%">Tom &amp; Jerry</prosody></speak>',
      });
      expect(String(d.last().headers.authorization)).toContain('/ap-southeast-2/polly/aws4_request');
    } finally {
      await d.close();
    }
  });

  it('playht: a key that is not <userId>:<secret> is a permanent auth error', async () => {
    const e = new PlayHtTts({ baseUrl: 'http://127.0.0.1:9' });
    await expect(e.synthesize(ttsRequest({ apiKey: 'no-colon' }))).rejects.toMatchObject({
      kind: 'auth',
      retryable: false,
    });
  });

  it('replicate: a versioned model goes to /v1/predictions; abort cancels the prediction', async () => {
    const d = await startReplicateDouble();
    try {
      const version = 'a'.repeat(64);
      const e = new ReplicateTts({ baseUrl: d.url, model: `jaaari/kokoro-82m:${version}`, pollMs: 50 });
      await collect((await e.synthesize(ttsRequest({ apiKey: d.key, voiceId: 'af_bella' }))).chunks);
      const create = d.requests.find((r) => r.method === 'POST')!;
      expect(create.path).toBe('/v1/predictions');
      expect(d.json(create)).toEqual({
        version,
        input: { text: 'Hello from the conformance suite.', voice: 'af_bella' },
      });

      d.pollsToSucceed = 1_000_000;
      const ac = new AbortController();
      const polled = d.requests.length;
      const p = e.synthesize(ttsRequest({ apiKey: d.key, signal: ac.signal }));
      await expect.poll(() => d.requests.slice(polled).filter((r) => r.method === 'GET').length).toBeGreaterThan(1);
      ac.abort();
      await expect(p).rejects.toMatchObject({ kind: 'aborted' });
      await expect.poll(() => d.canceled.size).toBe(1);
    } finally {
      await d.close();
    }
  });
});
