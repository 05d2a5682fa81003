import { split, tone } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

/** A latency profile for benchmarks: first audio after `firstByteMs`, `msPerChar` of audio per character. */
export interface CartesiaProfile {
  firstByteMs?: number;
  msPerChar?: number;
}

/**
 * Cartesia: `POST /tts/bytes` with `X-API-Key` and a dated `Cartesia-Version`; raw pcm_s16le streams back.
 * Errors are plain-text bodies, as Cartesia sends them. Without a profile: 0.3 s of tone at once.
 */
export function startCartesiaDouble(profile: CartesiaProfile = {}): Promise<HttpDouble> {
  return startHttpDouble({
    name: 'cartesia',
    errorBody: (_status, message) => ({ body: message, contentType: 'text/plain; charset=utf-8' }),
    authorize: (req, d) => req.headers['x-api-key'] === d.key,
    async route(req, res, d) {
      if (req.method !== 'POST' || req.path !== '/tts/bytes') return false;
      expectShape(/^\d{4}-\d{2}-\d{2}$/.test(String(req.headers['cartesia-version'])), 'Cartesia-Version header');
      const body = d.json(req) as {
        model_id?: unknown;
        transcript?: unknown;
        voice?: { mode?: unknown; id?: unknown };
        output_format?: { container?: unknown; encoding?: unknown; sample_rate?: unknown };
      };
      expectShape(typeof body.model_id === 'string', 'model_id');
      expectShape(typeof body.transcript === 'string' && body.transcript, 'transcript');
      expectShape(body.voice?.mode === 'id' && typeof body.voice.id === 'string', 'voice {mode: id, id}');
      expectShape(body.output_format?.container === 'raw', 'output_format.container raw');
      expectShape(body.output_format.encoding === 'pcm_s16le', 'output_format.encoding pcm_s16le');
      expectShape(typeof body.output_format.sample_rate === 'number', 'output_format.sample_rate');
      const seconds = profile.msPerChar ? (body.transcript.length * profile.msPerChar) / 1000 : 0.3;
      if (profile.firstByteMs) await new Promise((r) => setTimeout(r, profile.firstByteMs));
      await d.stream(res, split(tone(body.output_format.sample_rate, seconds)), 'audio/pcm');
      return true;
    },
  });
}
