import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Structured logger. Messages are static; data goes in fields. Secrets are redacted by path so a key that slips
 * into a log object never reaches the output.
 */
export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { ...base },
    redact: {
      paths: [
        'apiKey',
        'key',
        '*.apiKey',
        '*.key',
        'req.headers.authorization',
        'headers.authorization',
        'authorization',
        '*.authorization',
      ],
      censor: '[redacted]',
    },
  });
}
