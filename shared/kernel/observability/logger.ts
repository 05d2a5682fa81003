import { pino, type DestinationStream, type Logger } from 'pino';
import { byokHeaderFor, VENDOR_IDS } from '../vendors.ts';

export type { Logger } from 'pino';

/** Request headers that carry credentials: the API key, a session cookie and the per-request vendor keys. */
const SECRET_HEADERS = ['authorization', 'cookie', ...VENDOR_IDS.flatMap((vendor) => byokHeaderFor(vendor) ?? [])];
/** Where headers turn up in log objects: Fastify's `req`, our own fields, and libraries' option dumps
 * (e.g. @fastify/multipart logs `{busboyOptions: {headers}}` at trace level). */
const HEADER_HOLDERS = ['headers', 'req.headers', '*.headers', '*.*.headers'];

const REDACT_PATHS = [
  'apiKey',
  'key',
  '*.apiKey',
  '*.key',
  'authorization',
  '*.authorization',
  ...HEADER_HOLDERS.flatMap((holder) => SECRET_HEADERS.map((h) => `${holder}["${h}"]`)),
];

/**
 * Structured logger. Messages are static; data goes in fields. Secrets are redacted by path so a key that slips
 * into a log object never reaches the output. `destination` (tests) receives the same redacted lines.
 */
export function createLogger(
  level: string,
  base: Record<string, unknown> = {},
  destination?: DestinationStream,
): Logger {
  const options = { level, base: { ...base }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
