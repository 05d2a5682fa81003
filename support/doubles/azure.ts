import { split, tone } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

/**
 * Azure AI Speech: `POST /cognitiveservices/v1` with `Ocp-Apim-Subscription-Key`, an SSML body and
 * `X-Microsoft-OutputFormat`; `raw-<rate>khz-16bit-mono-pcm` streams PCM. The last SSML body is kept in `ssml`.
 */
export function startAzureDouble(): Promise<HttpDouble> {
  return startHttpDouble({
    name: 'azure',
    errorBody: (status, message) => ({ body: JSON.stringify({ error: { code: String(status), message } }) }),
    authorize: (req, d) => req.headers['ocp-apim-subscription-key'] === d.key,
    async route(req, res, d) {
      if (req.method !== 'POST' || req.path !== '/cognitiveservices/v1') return false;
      expectShape(req.headers['content-type'] === 'application/ssml+xml', 'content-type application/ssml+xml');
      const fmt = /^raw-(\d+)khz-16bit-mono-pcm$/.exec(String(req.headers['x-microsoft-outputformat']));
      expectShape(fmt, 'X-Microsoft-OutputFormat raw-*khz-16bit-mono-pcm');
      const ssml = req.body.toString('utf8');
      expectShape(/^<speak [^>]*version="1.0"[^>]*xml:lang="[^"]+"/.test(ssml), '<speak version xml:lang>');
      expectShape(/<voice name="[^"]+">/.test(ssml), '<voice name>');
      await d.stream(res, split(tone(Number(fmt[1]) * 1000, 0.3)), 'audio/x-wav');
      return true;
    },
  });
}
