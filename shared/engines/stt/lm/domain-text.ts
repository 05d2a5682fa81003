/**
 * Text → the word sequences a caller would speak: lower case, sentences split at their punctuation, digits spelled
 * out ("9:30" → "nine thirty", "$25" → "twenty five dollars", "4" → "four"), symbols that are said ("&", "%")
 * spelled, everything else that is not a word dropped. A recogniser hears words, so the model is built from words.
 */

const ONES = [
  'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten',
  'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen',
]; // prettier-ignore
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** An integer as words ("4521" → "four thousand five hundred twenty one"); long digit runs digit by digit. */
export function numberToWords(digits: string): string {
  const n = Number(digits);
  if (digits.length > 6 || (digits.length > 1 && digits.startsWith('0'))) {
    return [...digits].map((d) => ONES[+d]).join(' ');
  }
  return spell(n);
}

function spell(n: number): string {
  if (n < 20) return ONES[n]!;
  if (n < 100) return `${TENS[Math.floor(n / 10)]}${n % 10 ? ` ${ONES[n % 10]}` : ''}`;
  if (n < 1000) return `${ONES[Math.floor(n / 100)]} hundred${n % 100 ? ` ${spell(n % 100)}` : ''}`;
  return `${spell(Math.floor(n / 1000))} thousand${n % 1000 ? ` ${spell(n % 1000)}` : ''}`;
}

function time(h: string, m: string): string {
  const mm = Number(m);
  return `${numberToWords(h)} ${mm === 0 ? "o'clock" : mm < 10 ? `oh ${ONES[mm]}` : spell(mm)}`;
}

/** Sentences of words (each at least one word). */
export function textToSentences(text: string): string[][] {
  const spoken = text
    .toLowerCase()
    .replace(/\b(\d{1,2}):(\d{2})\b/g, (_, h: string, m: string) => ` ${time(h, m)} `)
    .replace(
      /\$(\d+)(?:\.(\d{2}))?/g,
      (_, d: string, c?: string) => ` ${numberToWords(d)} dollars${c && +c ? ` ${numberToWords(c)} cents` : ''} `,
    )
    .replace(/(\d+)(st|nd|rd|th)\b/g, (_, d: string) => ` ${ordinal(numberToWords(d))} `)
    .replace(/(\d+)\s*%/g, (_, d: string) => ` ${numberToWords(d)} percent `)
    .replace(/\d+/g, (d) => ` ${numberToWords(d)} `)
    .replace(/&/g, ' and ')
    .replace(/@/g, ' at ')
    .replace(/[_\-–—/]+/g, ' ');
  const out: string[][] = [];
  for (const sentence of spoken.split(/[.!?;:\n\r()[\]{}"“”]+/)) {
    const words = sentence
      .split(/[^a-z']+/)
      .map((w) => w.replace(/^'+|'+$/g, ''))
      .filter((w) => w.length > 0 && w.length <= 30);
    if (words.length > 0) out.push(words);
  }
  return out;
}

const ORDINAL: Record<string, string> = {
  one: 'first', two: 'second', three: 'third', five: 'fifth', eight: 'eighth', nine: 'ninth', twelve: 'twelfth',
}; // prettier-ignore

function ordinal(words: string): string {
  const parts = words.split(' ');
  const last = parts.pop()!;
  const o = ORDINAL[last] ?? (last.endsWith('y') ? `${last.slice(0, -1)}ieth` : `${last}th`);
  return [...parts, o].join(' ');
}
