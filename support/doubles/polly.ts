import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { split, tone } from './audio.ts';
import {
  expectShape,
  startHttpDouble,
  type HttpDouble,
  type RecordedRequest,
} from '../../shared/domains/agent-tests/simulators/http-double.ts';

export const POLLY_DOUBLE_CREDENTIALS = { accessKeyId: 'AKIDDOUBLE', secretAccessKey: 'double/secret+key' };

/**
 * Amazon Polly `SynthesizeSpeech`: `POST /v1/speech` (JSON) signed with SigV4 for service `polly`; the double
 * re-signs the received request with the AWS SDK's own signer (Smithy) and compares signatures. `OutputFormat: pcm`
 * streams s16le. Errors `{message}` with `x-amzn-ErrorType`. `key` is `ACCESS_KEY_ID:SECRET:REGION`.
 */
export function startPollyDouble(region = 'eu-west-1'): Promise<HttpDouble> {
  const signer = new SignatureV4({
    credentials: POLLY_DOUBLE_CREDENTIALS,
    region,
    service: 'polly',
    sha256: Sha256,
    applyChecksum: false,
  });
  return startHttpDouble(
    {
      name: 'polly',
      errorBody: (status, message) => ({
        body: JSON.stringify({ message }),
        headers: {
          'x-amzn-errortype':
            status === 401 || status === 403
              ? 'UnrecognizedClientException'
              : status === 429
                ? 'ThrottlingException'
                : status >= 500
                  ? 'ServiceFailureException'
                  : 'InvalidSsmlException',
        },
      }),
      authorize: () => true, // checked in route: the signature needs the body
      async route(req, res, d) {
        if (req.method !== 'POST' || req.path !== '/v1/speech') return false;
        if (!(await signatureMatches(signer, req))) {
          d.fail(res, 403, 'The request signature we calculated does not match the signature you provided.');
          return true;
        }
        const body = d.json(req);
        expectShape(body.OutputFormat === 'pcm', 'OutputFormat pcm');
        expectShape(body.SampleRate === '8000' || body.SampleRate === '16000', 'SampleRate "8000"|"16000"');
        expectShape(typeof body.Text === 'string' && body.Text, 'Text');
        expectShape(body.TextType === 'text' || body.TextType === 'ssml', 'TextType');
        expectShape(typeof body.VoiceId === 'string', 'VoiceId');
        await d.stream(res, split(tone(Number(body.SampleRate), 0.3)), 'audio/pcm');
        return true;
      },
    },
    `${POLLY_DOUBLE_CREDENTIALS.accessKeyId}:${POLLY_DOUBLE_CREDENTIALS.secretAccessKey}:${region}`,
  );
}

async function signatureMatches(signer: SignatureV4, req: RecordedRequest): Promise<boolean> {
  const auth = String(req.headers.authorization ?? '');
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(';') ?? [];
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!m || !signedHeaders.includes('host')) return false;
  const headers: Record<string, string> = {};
  for (const h of signedHeaders) headers[h] = String(req.headers[h] ?? '');
  const signed = await signer.sign(
    {
      method: req.method,
      protocol: 'http:',
      hostname: headers.host!.split(':')[0]!,
      path: req.path,
      query: {},
      headers,
      body: req.body.toString('utf8'),
    },
    { signingDate: new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`) },
  );
  const expected = /Signature=([0-9a-f]+)/.exec(String(signed.headers.authorization))?.[1];
  const got = /Signature=([0-9a-f]+)/.exec(auth)?.[1];
  return Boolean(expected && expected === got);
}
