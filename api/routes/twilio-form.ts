import type { FastifyInstance } from 'fastify';
import { z } from 'zod';

/** Twilio posts its callbacks as a URL-encoded form: parsed to a flat string record (signatures are over it). */
export const TWILIO_FORM = 'application/x-www-form-urlencoded';
export const TwilioForm = z.record(z.string(), z.string());

/** Registers the form parser once per Fastify instance (the sessions and campaigns routes both take callbacks). */
export function acceptTwilioForms(app: FastifyInstance): void {
  if (app.hasContentTypeParser(TWILIO_FORM)) return;
  app.addContentTypeParser(TWILIO_FORM, { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => {
    const out: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(body as string)) out[k] = v;
    done(null, out);
  });
}
