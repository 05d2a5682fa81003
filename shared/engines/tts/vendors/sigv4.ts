import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';

/** AWS credentials for Signature Version 4. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignInput {
  method: string;
  url: string;
  /** Headers to send and sign (host and x-amz-date are added). */
  headers: Record<string, string>;
  body: string | Buffer;
  region: string;
  service: string;
  credentials: AwsCredentials;
  /** Signing time (default now). */
  date?: Date;
}

/**
 * Signs a request with AWS Signature Version 4 (header form) through the AWS SDK's own signer (Smithy, with the
 * same Node-crypto SHA-256 the S3 client uses) and returns the headers to send: the given ones plus `host`,
 * `x-amz-date`, `x-amz-security-token` (with a session token) and `authorization`. Non-S3 services escape the path
 * twice (the signer's default); no payload-hash header is added, as Polly does not want one.
 */
export async function signV4(input: SignInput): Promise<Record<string, string>> {
  const url = new URL(input.url);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers)) headers[k.toLowerCase()] = v;
  headers.host = url.host;
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
  }
  const signer = new SignatureV4({
    credentials: input.credentials,
    region: input.region,
    service: input.service,
    sha256: Sha256,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: input.method.toUpperCase(),
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers,
      body: input.body,
    },
    { signingDate: input.date ?? new Date() },
  );
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(signed.headers)) out[k.toLowerCase()] = String(v);
  return out;
}
