import { createHash, randomInt } from 'node:crypto';

/** Every API key starts with this prefix, so leaked keys are easy to find with secret scanners. */
export const API_KEY_PREFIX = 'vap_';
const BODY_LENGTH = 40;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const FORMAT = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9]{${BODY_LENGTH}}$`);
/** How much of the key lists show: the prefix plus a few characters, enough to tell keys apart. */
const DISPLAY_LENGTH = API_KEY_PREFIX.length + 6;

/** A new raw key: 40 base62 characters (≈238 bits), alphanumeric so a double-click selects all of it. */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < BODY_LENGTH; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return API_KEY_PREFIX + body;
}

export function isWellFormedApiKey(raw: string): boolean {
  return FORMAT.test(raw);
}

/** Keys are high-entropy, so a plain SHA-256 is enough to make the stored value useless to a thief. */
export function hashApiKey(raw: string): Buffer {
  return createHash('sha256').update(raw).digest();
}

export function displayPrefix(raw: string): string {
  return raw.slice(0, DISPLAY_LENGTH);
}
