/**
 * Phone numbers in what a caller said, as speech-to-text writes them: digits ("555 123 4567", "+44 20 7946 0000")
 * or digit words ("five five five, one two three…"). Shared by the local reply engine (take_message) and the
 * post-call rule-based extractor.
 */
const DIGIT_WORDS: Record<string, string> = {
  zero: '0',
  oh: '0',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
};
const DIGIT_WORD = /\b(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)\b/gi;
/** A run of 7-15 digits, optionally split by spaces, dots, dashes, commas or brackets, with an optional leading +. */
const RUN = /\+?\d(?:[\s.,()-]{0,3}\d){6,14}/g;

/** Every phone number said, in order, each once: digits only, with a leading + when one was said. */
export function spokenPhoneNumbers(text: string): string[] {
  const found: string[] = [];
  for (const m of text.replace(DIGIT_WORD, (w) => DIGIT_WORDS[w.toLowerCase()]!).matchAll(RUN)) {
    const digits = m[0].replace(/\D/g, '');
    if (digits.length < 7 || digits.length > 15) continue;
    const n = m[0].startsWith('+') ? `+${digits}` : digits;
    if (!found.includes(n)) found.push(n);
  }
  return found;
}
