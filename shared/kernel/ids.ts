import { randomBytes } from 'node:crypto';

/** Resource kinds and their id prefixes. Ids are opaque to clients; the prefix tells a human what they hold. */
export const ID_PREFIX = {
  developer: 'dev',
  apiKey: 'key',
  agent: 'agt',
  collection: 'col',
  document: 'doc',
  chunk: 'chk',
  job: 'job',
  session: 'ses',
  conversation: 'cnv',
  instance: 'ins',
  turn: 'trn',
  webhook: 'whk',
  delivery: 'dlv',
  ledger: 'led',
  providerKey: 'pk',
  recording: 'rec',
  task: 'tsk',
  message: 'msg',
  campaign: 'cmp',
  recipient: 'rcp',
  campaignCall: 'cac',
  callReplay: 'rpl',
  testRun: 'atr',
} as const;
export type IdKind = keyof typeof ID_PREFIX;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case
let lastMs = 0;
let lastRand: Uint8Array = new Uint8Array(10);

/**
 * Time-sortable id: 48-bit milliseconds + 80 random bits (ULID layout), monotonic within a millisecond so that
 * ids made in one process sort in creation order, which the cursor pagination relies on.
 */
export function newId(kind: IdKind): string {
  let ms = Date.now();
  let rand: Uint8Array;
  if (ms <= lastMs) {
    ms = lastMs;
    rand = lastRand.slice();
    for (let i = rand.length - 1; i >= 0; i--) {
      rand[i] = (rand[i]! + 1) & 0xff;
      if (rand[i] !== 0) break;
    }
  } else {
    rand = randomBytes(10);
  }
  lastMs = ms;
  lastRand = rand;
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  let bits = 0;
  let acc = 0;
  for (const byte of rand) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(acc >> (bits - 5)) & 31];
      bits -= 5;
    }
    acc &= (1 << bits) - 1;
  }
  return `${ID_PREFIX[kind]}_${out}`;
}
