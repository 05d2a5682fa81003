import { randomBytes } from 'node:crypto';
import { parseWav } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';
import { scriptedWords, SCRIPT } from '../../shared/domains/agent-tests/simulators/transcript.ts';

/**
 * AssemblyAI v2: `POST /v2/upload` (raw bytes → `{upload_url}`), `POST /v2/transcript` (`{audio_url, …}` →
 * `{id, status: queued}`), `GET /v2/transcript/{id}` (processing, then completed with words and utterances in
 * milliseconds). Auth: the bare key in `authorization`; errors `{error}`.
 */
export function startAssemblyAiDouble(): Promise<HttpDouble> {
  const uploads = new Map<string, Buffer>();
  const jobs = new Map<string, { audio: Buffer; body: Record<string, unknown>; polls: number }>();
  return startHttpDouble({
    name: 'assemblyai',
    errorBody: (_status, message) => ({ body: JSON.stringify({ error: message }) }),
    authorize: (req, d) => req.headers.authorization === d.key,
    route(req, res, d) {
      if (req.method === 'POST' && req.path === '/v2/upload') {
        expectShape(req.body.length > 44, 'audio bytes');
        const id = randomBytes(6).toString('hex');
        uploads.set(id, req.body);
        d.sendJson(res, 200, { upload_url: `${d.url}/uploads/${id}` });
        return true;
      }
      if (req.method === 'POST' && req.path === '/v2/transcript') {
        const body = d.json(req);
        const upload = /\/uploads\/([0-9a-f]+)$/.exec(String(body.audio_url))?.[1];
        expectShape(upload && uploads.has(upload), 'audio_url from /v2/upload');
        const id = randomBytes(8).toString('hex');
        jobs.set(id, { audio: uploads.get(upload)!, body, polls: 0 });
        d.sendJson(res, 200, { id, status: 'queued', audio_url: body.audio_url });
        return true;
      }
      const get = /^\/v2\/transcript\/([0-9a-f]+)$/.exec(req.path);
      if (req.method === 'GET' && get && jobs.has(get[1]!)) {
        const job = jobs.get(get[1]!)!;
        job.polls++;
        if (job.polls < 2) return (d.sendJson(res, 200, { id: get[1], status: 'processing' }), true);
        const { sampleRate, pcm } = parseWav(job.audio);
        const duration = pcm.length / 2 / sampleRate;
        const labels = job.body.speaker_labels === true;
        const ms = (s: number) => Math.round(s * 1000);
        const words = scriptedWords(duration).map((w) => ({
          text: w.word,
          start: ms(w.start),
          end: ms(w.end),
          confidence: 0.98,
          speaker: labels ? 'AB'[w.speaker]! : null,
        }));
        const half = Math.ceil(words.length / 2);
        d.sendJson(res, 200, {
          id: get[1],
          status: 'completed',
          text: SCRIPT,
          language_code: job.body.language_code ?? 'en_us',
          audio_duration: Math.round(duration),
          words,
          utterances: labels
            ? [words.slice(0, half), words.slice(half)].map((ws) => ({
                speaker: ws[0]!.speaker,
                start: ws[0]!.start,
                end: ws.at(-1)!.end,
                text: ws.map((w) => w.text).join(' '),
                confidence: 0.98,
                words: ws,
              }))
            : null,
        });
        return true;
      }
      return false;
    },
  });
}
