import { mulawBase64BytesToPcm } from '../../../shared/kernel/audio/mulaw.ts';

/** A decoded caller media frame (serializer.ts's InboundEvent 'media'). */
export interface MediaFrame {
  event: 'media';
  pcm: Buffer;
  timestampMs: number;
  track: string;
}

/*
 * The fast path for Twilio's `media` message, 50 a second per call: read straight from the socket's bytes instead
 * of toString + JSON.parse (a string copy, five strings and two objects per frame, then the garbage collector).
 * It accepts only the plain shape Twilio sends: one object with exactly the keys event, sequenceNumber, streamSid
 * and media (an object with exactly track, chunk, timestamp and payload), each once, every value a string of
 * printable ASCII without escapes, JSON whitespace between tokens. Anything else returns null and goes the general
 * way (JSON.parse, then the hand check or the schema), which also reports every error; so when this returns a frame,
 * the general way would have returned the same frame (test/realtime/twilio-media-frame.test.ts holds them equal).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;

const TOP_KEYS = ['event', 'sequenceNumber', 'streamSid', 'media'].map((k) => Buffer.from(k, 'latin1'));
const MEDIA_KEYS = ['track', 'chunk', 'timestamp', 'payload'].map((k) => Buffer.from(k, 'latin1'));
const MEDIA = Buffer.from('media', 'latin1');
const TOP_MEDIA = 3;

/*
 * The scan's state lives in module variables, not a closure or object per message: the parser never yields, so
 * two frames cannot interleave. `from`/`to` bound each string value read; `starts`/`ends` hold the 8 values.
 */
let from = 0;
let to = 0;
const starts = new Int32Array(8);
const ends = new Int32Array(8);

function skipSpace(b: Uint8Array, p: number): number {
  while (p < b.length) {
    const c = b[p]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    p++;
  }
  return p;
}

/** A string at `p` (its opening quote): sets from/to and returns the position after it, or -1 when not plain. */
function readString(b: Uint8Array, p: number): number {
  if (b[p] !== QUOTE) return -1;
  for (let i = p + 1; i < b.length; i++) {
    const c = b[i]!;
    if (c === QUOTE) {
      from = p + 1;
      to = i;
      return i + 1;
    }
    // Escapes, control characters (invalid JSON) and non-ASCII (UTF-8 decoding) are left to JSON.parse.
    if (c === BACKSLASH || c < 0x20 || c >= 0x80) return -1;
  }
  return -1;
}

/** Which of `keys` the bytes b[from, to) spell, or -1. */
function keyIndex(b: Uint8Array, keys: Buffer[]): number {
  const len = to - from;
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    if (key.length !== len) continue;
    let i = 0;
    while (i < len && b[from + i] === key[i]) i++;
    if (i === len) return k;
  }
  return -1;
}

/**
 * An object at `p` whose keys are all in `keys` (each once) and whose values are strings or, for `nestedKey`, such
 * an object of `MEDIA_KEYS`; value k's bounds go to starts/ends[base + k]. Returns the position after it, or -1.
 */
function readObject(b: Uint8Array, p: number, keys: Buffer[], base: number, nestedKey: number): number {
  if (b[p] !== OPEN) return -1;
  let seen = 0;
  p = skipSpace(b, p + 1);
  for (;;) {
    p = readString(b, p);
    if (p < 0) return -1;
    const k = keyIndex(b, keys);
    if (k < 0 || seen & (1 << k)) return -1;
    seen |= 1 << k;
    p = skipSpace(b, p);
    if (b[p] !== COLON) return -1;
    p = skipSpace(b, p + 1);
    if (k === nestedKey) {
      p = readObject(b, p, MEDIA_KEYS, 4, -1);
    } else {
      p = readString(b, p);
      starts[base + k] = from;
      ends[base + k] = to;
    }
    if (p < 0) return -1;
    p = skipSpace(b, p);
    if (b[p] === COMMA) p = skipSpace(b, p + 1);
    else if (b[p] === CLOSE) return seen === (1 << keys.length) - 1 ? p + 1 : -1;
    else return -1;
  }
}

/** True when b[s, e) is one or more ASCII digits (the schema's /^\d+$/). */
function digits(b: Uint8Array, s: number, e: number): boolean {
  if (e <= s) return false;
  for (let i = s; i < e; i++) if (b[i]! < 0x30 || b[i]! > 0x39) return false;
  return true;
}

/** Number() of the digits b[s, e): summed exactly up to 15 digits (under 2^53), through a string beyond. */
function decimal(b: Buffer, s: number, e: number): number {
  if (e - s > 15) return Number(b.toString('latin1', s, e));
  let v = 0;
  for (let i = s; i < e; i++) v = v * 10 + b[i]! - 0x30;
  return v;
}

/** The track's name; a call's frames all name the same track, so its string is made once and reused. */
let lastTrack = Buffer.alloc(0);
let lastTrackName = '';
function trackName(b: Buffer): string {
  const s = starts[4]!;
  const e = ends[4]!;
  if (b.compare(lastTrack, 0, lastTrack.length, s, e) !== 0) {
    lastTrack = Buffer.from(b.subarray(s, e));
    lastTrackName = lastTrack.toString('latin1');
  }
  return lastTrackName;
}

/** The frame, or null: not a plain media message, or one the general path must judge. */
export function plainMediaFrame(b: Buffer): MediaFrame | null {
  const p = readObject(b, skipSpace(b, 0), TOP_KEYS, 0, TOP_MEDIA);
  if (p < 0 || skipSpace(b, p) !== b.length) return null;
  // Values: 0 event, 1 sequenceNumber, 2 streamSid (any string), 4 track, 5 chunk, 6 timestamp, 7 payload.
  if (ends[0]! - starts[0]! !== MEDIA.length) return null;
  for (let i = 0; i < MEDIA.length; i++) if (b[starts[0]! + i] !== MEDIA[i]) return null;
  if (!digits(b, starts[1]!, ends[1]!) || !digits(b, starts[5]!, ends[5]!) || !digits(b, starts[6]!, ends[6]!))
    return null;
  const pcm = mulawBase64BytesToPcm(b, starts[7]!, ends[7]!);
  if (!pcm) return null;
  return { event: 'media', pcm, timestampMs: decimal(b, starts[6]!, ends[6]!), track: trackName(b) };
}
