/**
 * What a caller is reading out, from the shape of the transcript's last words (issue 31): a phone, card or order
 * number (digits and number words), an e-mail address ("at", "dot"), a spelled name (single letters) or a date
 * (a month name). Callers read these in groups with pauses between them ("four one five … five five five …"), and
 * a pause between groups is not the end of their turn. No model: word classes and counts, cheap enough for every
 * transcript of a call.
 *
 * `reading`: an entity is being read and is not complete yet (the caller will go on); `complete`: it reads as
 * whole (ten digits of a phone number, an address ending in "dot com", the letters of a name said before, a month
 * and a day); `hesitating`: the words end on a hesitation ("um", "let me see"): the caller is looking something up;
 * `none`: no entity at the end of the words.
 */
export type EntityState = 'none' | 'reading' | 'complete' | 'hesitating';
export type EntityKind = 'digits' | 'email' | 'spelled' | 'date';

export interface EntityShape {
  state: EntityState;
  kind: EntityKind | null;
}

const DIGIT_WORDS: Record<string, number> = {
  zero: 1,
  oh: 1,
  o: 1,
  one: 1,
  two: 1,
  three: 1,
  four: 1,
  five: 1,
  six: 1,
  seven: 1,
  eight: 1,
  nine: 1,
};
/** Number words that stand for two digits when a number is read in pairs ("fifteen", "twenty one" → 2). */
const TENS = new Set(
  'ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety'.split(
    ' ',
  ),
);
const MULTIPLIERS: Record<string, number> = { double: 2, triple: 3 };
const MONTHS = new Set(
  'january february march april may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec'.split(
    ' ',
  ),
);
const ORDINALS = new Set(
  (
    'first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth ' +
    'fifteenth sixteenth seventeenth eighteenth nineteenth twentieth thirtieth'
  ).split(' '),
);
/** Words joining the parts of an e-mail address. */
const EMAIL_JOINS = new Set(['at', 'dot', 'underscore', 'dash', 'hyphen', 'period']);
/** Endings of an address: the caller has read its last part. */
const TLDS = new Set('com org net edu gov io co uk us ca de fr es it nl au info biz me ai dev app'.split(' '));
/** Joins inside a digit run or a date ("dash", "the fifth of March"). */
const RUN_JOINS = new Set(['dash', 'hyphen', 'space', 'of', 'the', 'and']);
const HESITATIONS = new Set(['um', 'umm', 'uh', 'uhh', 'er', 'erm', 'hmm', 'hm', 'ah', 'eh']);
/** Hesitations of several words ("let me see"): matched on the last words of the transcript. */
const HESITATION_PHRASES = [
  'let me see',
  'let me check',
  'let me think',
  'let me look',
  'let me find it',
  'hold on',
  'hang on',
  'one moment',
  'one second',
  'one sec',
  'just a second',
  'just a sec',
  'just a moment',
  'give me a second',
  'give me a sec',
  'wait a second',
  'where was i',
  'what is it',
  "what's it",
].map((p) => p.split(' '));
/** Words that say a number is a phone number, where the length of a complete one is known. */
const PHONE_CUE = /\b(phone|number|call|callback|cell|mobile|reach me|contact)\b/;
const CARD_CUE = /\b(card|visa|mastercard|amex|credit|debit)\b/;
/** Numbers of no fixed length (an order or account number): complete only when the caller stops. */
const OTHER_CUE = /\b(order|account|reference|confirmation|code|zip|postcode|policy|ticket|member|id)\b/;
const EMAIL_CUE = /\b(e-?mail|address|gmail|outlook|hotmail|yahoo)\b/;

/**
 * The transcript's tokens as the shape is read: lower case, an address written out ("j.smith@example.com") split
 * into its spoken parts, other punctuation dropped. `closed`: the text ends on final punctuation.
 */
function tokens(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/@/g, ' at ')
    .replace(/(\p{L})\.(?=\p{L})/gu, '$1 dot ')
    .replace(/(\d)[-–](?=\d)/g, '$1 ')
    .replace(/[^\p{L}\p{N}'\s]/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

const isLetter = (w: string) => /^\p{L}$/u.test(w);
const isDigits = (w: string) => /^\d+$/.test(w);
const digitsOf = (w: string) =>
  isDigits(w) ? w.length : (DIGIT_WORDS[w] ?? (TENS.has(w) ? 2 : w === 'hundred' ? 2 : w === 'thousand' ? 3 : 0));
const isNumberWord = (w: string) => digitsOf(w) > 0 || w in MULTIPLIERS;
const isOrdinal = (w: string) => ORDINALS.has(w) || /^\d{1,2}(st|nd|rd|th)$/.test(w);

/** Whether the words end on a hesitation: the word count it takes, or 0. */
function hesitationAtEnd(w: string[]): number {
  if (w.length && HESITATIONS.has(w.at(-1)!)) return 1;
  for (const p of HESITATION_PHRASES) {
    if (p.length <= w.length && p.every((x, i) => w[w.length - p.length + i] === x)) return p.length;
  }
  return 0;
}

/** The entity the words end on, and whether it is complete. */
export function entityShape(text: string): EntityShape {
  const all = tokens(text);
  if (hesitationAtEnd(all) > 0) return { state: 'hesitating', kind: null };
  // Hesitations inside a number ("four one five, um, five five five") are skipped, not an end of the run.
  const w = all.filter((x) => !HESITATIONS.has(x));
  if (!w.length) return { state: 'none', kind: null };
  const lower = all.join(' ');

  // E-mail: the run of words joined by "at"/"dot" at the end.
  const email = emailRun(w);
  if (email && (email.includes('dot') || EMAIL_CUE.test(lower))) {
    const [last, before] = [email.at(-1)!, email.at(-2)];
    const done = before === 'dot' && TLDS.has(last);
    return { state: done ? 'complete' : 'reading', kind: 'email' };
  }

  // A spelled word: two or more single letters at the end ("K O W").
  let k = w.length;
  while (k > 0 && isLetter(w[k - 1]!)) k--;
  const letters = w.slice(k);
  if (letters.length >= 2 && !(letters.length === 2 && letters.every((x) => x === 'a' || x === 'i'))) {
    const spelled = letters.join('');
    // Complete once the letters spell a word the caller said before them ("Kowalski, K O W A L S K I").
    const named = w.slice(0, k).some((x) => x.length >= 2 && x === spelled);
    const longer = w.slice(0, k).some((x) => x.length > spelled.length && x.startsWith(spelled));
    return { state: named && !longer ? 'complete' : 'reading', kind: 'spelled' };
  }

  // A date: a month name in the last few words, with or without its day.
  const tail = w.slice(-5);
  const m = tail.findIndex((x) => MONTHS.has(x));
  if (m >= 0) {
    const after = tail.slice(m + 1);
    const before = tail.slice(0, m);
    const dayAfter = after.some((x) => isOrdinal(x) || isNumberWord(x));
    const dayBefore = before.some((x) => isOrdinal(x) || isDigits(x));
    const trailingJoin = RUN_JOINS.has(tail.at(-1)!);
    const ok = (dayAfter || dayBefore) && !trailingJoin && after.every((x) => !RUN_JOINS.has(x) || x === 'the');
    // "May" alone is also a verb: only a month with a day, or one the caller is plainly going on after, counts.
    if (ok) return { state: 'complete', kind: 'date' };
    if (after.length === 0 && w.at(-1) !== 'may') return { state: 'reading', kind: 'date' };
  }

  // Digits: the number words and digit groups at the end ("four one five five five five").
  let digits = 0;
  let j = w.length;
  while (j > 0) {
    const x = w[j - 1]!;
    if (isNumberWord(x)) digits += x in MULTIPLIERS ? 1 : digitsOf(x);
    else if (!(RUN_JOINS.has(x) && j < w.length && isNumberWord(w[j - 2] ?? ''))) break;
    j--;
  }
  const other = OTHER_CUE.test(lower);
  const cue = PHONE_CUE.test(lower) || CARD_CUE.test(lower) || other;
  // One or two numbers ("a table for four", "at 5 30") are an amount or a time, not an entity being read.
  if (digits >= 3 || (digits >= 1 && cue)) {
    if (CARD_CUE.test(lower)) return { state: digits >= 15 ? 'complete' : 'reading', kind: 'digits' };
    if (PHONE_CUE.test(lower) && !other) {
      const done = digits === 7 || digits === 10 || (digits === 11 && /^(one|1)/.test(w[j] ?? ''));
      return { state: done || digits > 11 ? 'complete' : 'reading', kind: 'digits' };
    }
    return { state: 'reading', kind: 'digits' };
  }
  return { state: 'none', kind: null };
}

/** The words at the end joined by e-mail joins ("john dot smith at example dot"), or null when there are none. */
function emailRun(w: string[]): string[] | null {
  let i = w.length - 1;
  // The last word belongs to the run when it is a join, or a part after one.
  if (!EMAIL_JOINS.has(w[i]!) && !(i > 0 && EMAIL_JOINS.has(w[i - 1]!))) return null;
  while (i > 0 && (EMAIL_JOINS.has(w[i]!) || EMAIL_JOINS.has(w[i - 1]!))) i--;
  const run = w.slice(i);
  return run.some((x) => x === 'at' || x === 'dot') && run.length >= 2 ? run : null;
}
