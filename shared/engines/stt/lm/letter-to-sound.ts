/**
 * Rule-based letter-to-sound for English words the CMU dictionary lacks (names of businesses, products, tools):
 * ordered rewrite rules in the style of the NRL rules (Elovitz et al., 1976), each a letter string with a left and a
 * right context, tried longest first at every position; the first that matches writes its phones (CMU ARPAbet,
 * without stress, as pocketsphinx's dictionary spells them). Context classes: `#` one or more vowels, `:` zero or more
 * consonants, `^` one consonant, `.` a voiced consonant, `+` a front vowel (e i y),
 * ` ` the word's edge. The dictionary is the reference: test/speech/letter-to-sound.test.ts measures these rules on
 * words held out of it, and docs/speech.md gives the figures.
 */

type Rule = [left: string, match: string, right: string, phones: string];

const VOWELS = 'aeiouy';
const VOICED = 'bdvgjlmnrwz';

// prettier-ignore
const RULES: Record<string, Rule[]> = {
  a: [
    ['', 'augh', '', 'AO'], ['', 'air', '', 'EH R'], ['', 'ai', '', 'EY'], ['', 'ay', '', 'EY'], ['', 'au', '', 'AO'], ['', 'aw', '', 'AO'],
    ['', 'ar', '#', 'EH R'], ['', 'ar', '', 'AA R'], ['', 'all', '', 'AO L'], ['', 'alk', '', 'AO K'],
    ['', 'ea', '', 'IY'], ['', 'age', ' ', 'IH JH'], ['', 'ate', ' ', 'EY T'], ['', 'able', ' ', 'AH B AH L'],
    ['', 'a', ' ', 'AH'], [' ', 'a', '^ ', 'AE'], ['', 'a', '^e ', 'EY'], ['', 'a', '^ing', 'EY'], ['', 'a', '^ion', 'EY'],
    ['', 'a', '^+#', 'EY'], ['', 'a', '', 'AE'],
  ],
  b: [['', 'bb', '', 'B'], ['m', 'b', ' ', ''], ['', 'b', '', 'B']],
  c: [
    ['', 'ch', '', 'CH'], ['', 'ck', '', 'K'], ['', 'cc', '+', 'K S'], ['', 'cc', '', 'K'], ['', 'cia', '', 'SH AH'],
    ['', 'cious', '', 'SH AH S'], ['', 'c', '+', 'S'], ['', 'c', '', 'K'],
  ],
  d: [['', 'dd', '', 'D'], ['', 'dge', '', 'JH'], ['#:', 'ded', ' ', 'D IH D'], ['', 'd', '', 'D']],
  e: [
    ['', 'eau', '', 'OW'], ['', 'ee', '', 'IY'], ['', 'ea', '', 'IY'], ['', 'ei', '', 'EY'], ['', 'ey', ' ', 'IY'],
    ['', 'ey', '', 'EY'], ['', 'ew', '', 'UW'], ['', 'eu', '', 'UW'], ['', 'er', '#', 'EH R'], ['', 'er', '', 'ER'],
    ['#:', 'ed', ' ', 'D'], ['#:t', 'ed', ' ', 'IH D'], ['#:', 'es', ' ', 'Z'], ['#:', 'e', ' ', ''],
    [' :', 'e', ' ', 'IY'], ['', 'e', '^+#', 'IY'], ['', 'e', '', 'EH'],
  ],
  f: [['', 'ff', '', 'F'], ['', 'f', '', 'F']],
  g: [
    ['', 'gg', '', 'G'], ['', 'gh', ' ', ''], [' ', 'gh', '', 'G'], ['', 'gh', '', ''], ['', 'gn', ' ', 'N'],
    [' ', 'gn', '', 'N'], ['', 'ge', ' ', 'JH'], ['', 'g', 'i', 'JH'], ['', 'g', 'e', 'JH'], ['', 'g', 'y', 'JH'],
    ['', 'g', '', 'G'],
  ],
  h: [['', 'h', '#', 'HH'], ['', 'h', '', '']],
  i: [
    ['', 'igh', '', 'AY'], ['', 'ie', ' ', 'IY'], ['', 'ier', '', 'IY ER'], ['', 'ie', '', 'IY'], ['', 'ir', '#', 'AY R'],
    ['', 'ir', '', 'ER'], ['', 'ing', '', 'IH NG'], ['', 'ion', '', 'AH N'], ['', 'ity', ' ', 'AH T IY'], ['', 'ious', '', 'IY AH S'],
    ['', 'ive', ' ', 'IH V'], ['', 'ind', '', 'AY N D'], ['', 'ild', '', 'AY L D'], ['', 'i', '^e ', 'AY'],
    ['', 'i', 'a', 'IY'], ['', 'i', 'o', 'IY'], ['', 'i', ' ', 'IY'], ['', 'i', '', 'IH'],
  ],
  j: [['', 'j', '', 'JH']],
  k: [[' ', 'kn', '', 'N'], ['', 'k', '', 'K']],
  l: [['', 'll', '', 'L'], ['', 'le', ' ', 'AH L'], ['', 'l', '', 'L']],
  m: [['', 'mm', '', 'M'], ['', 'm', '', 'M']],
  n: [['', 'nn', '', 'N'], ['', 'ng', '', 'NG'], ['', 'n', 'k', 'NG'], ['', 'n', '', 'N']],
  o: [
    ['', 'ough', '', 'AO'], ['', 'oo', 'k', 'UH'], ['', 'oo', '', 'UW'], ['', 'oa', '', 'OW'], ['', 'oi', '', 'OY'],
    ['', 'oy', '', 'OY'], ['', 'ou', '', 'AW'], ['', 'ow', ' ', 'OW'], ['', 'ow', '', 'AW'], ['', 'or', '', 'AO R'],
    ['', 'old', '', 'OW L D'], ['', 'o', '^e ', 'OW'], ['', 'o', ' ', 'OW'], ['', 'o', '^+#', 'OW'], ['', 'o', '', 'AA'],
  ],
  p: [['', 'ph', '', 'F'], ['', 'pp', '', 'P'], ['', 'p', '', 'P']],
  q: [['', 'qu', '', 'K W'], ['', 'q', '', 'K']],
  r: [['', 'rr', '', 'R'], [' ', 'rh', '', 'R'], ['', 'r', '', 'R']],
  s: [
    ['', 'sch', '', 'S K'], ['', 'sh', '', 'SH'], ['t', 's', ' ', 'S'], ['p', 's', ' ', 'S'], ['k', 's', ' ', 'S'],
    ['f', 's', ' ', 'S'], ["'", 's', ' ', 'Z'], ['', 'sion', '', 'ZH AH N'], ['', 'ss', '', 'S'], ['#', 's', '#', 'Z'],
    ['.', 's', ' ', 'Z'], ['#', 's', ' ', 'Z'], ['', 's', '', 'S'],
  ],
  t: [
    ['', 'tion', '', 'SH AH N'], ['', 'tch', '', 'CH'], ['', 'th', '', 'TH'], ['', 'tt', '', 'T'], ['', 'tia', '', 'SH AH'],
    ['', 'ture', '', 'CH ER'], ['', 't', '', 'T'],
  ],
  u: [
    ['', 'ue', ' ', 'UW'], ['', 'ui', '', 'UW'], ['', 'ur', '#', 'UH R'], ['', 'ur', '', 'ER'], ['', 'u', '^e ', 'UW'],
    [' ', 'u', '^+#', 'Y UW'], ['', 'u', ' ', 'UW'], ['', 'u', '', 'AH'],
  ],
  v: [['', 'v', '', 'V']],
  w: [[' ', 'wr', '', 'R'], ['', 'wh', '', 'W'], ['', 'w', '#', 'W'], ['', 'w', '', '']],
  x: [[' ', 'x', '', 'Z'], ['', 'x', '', 'K S']],
  y: [[' ', 'y', '#', 'Y'], ['', 'y', ' ', 'IY'], ['^', 'y', '^', 'IH'], ['', 'y', '', 'IY']],
  z: [['', 'zz', '', 'Z'], ['', 'z', '', 'Z']],
  "'": [['', "'", '', '']],
};

const isVowel = (c: string | undefined) => c !== undefined && VOWELS.includes(c);
const isCons = (c: string | undefined) => c !== undefined && c >= 'a' && c <= 'z' && !VOWELS.includes(c);

/** Whether `pattern` matches the text going right from `i` (dir 1) or left from `i` (dir -1); `w` is ` word `. */
function matches(w: string, i: number, pattern: string, dir: 1 | -1): boolean {
  let at = i;
  const chars = dir === 1 ? [...pattern] : [...pattern].reverse();
  for (const p of chars) {
    const c = w[at];
    switch (p) {
      case '#':
        if (!isVowel(c)) return false;
        while (isVowel(w[at + dir])) at += dir;
        break;
      case ':':
        while (isCons(w[at])) at += dir;
        continue; // consumed zero or more: do not step again
      case '^':
        if (!isCons(c)) return false;
        break;
      case '.':
        if (c === undefined || !VOICED.includes(c)) return false;
        break;
      case '+':
        if (c !== 'e' && c !== 'i' && c !== 'y') return false;
        break;
      default:
        if (c !== p) return false;
    }
    at += dir;
  }
  return true;
}

/** ARPAbet phones (space-separated) for a lower-case word of letters and apostrophes. */
export function letterToSound(word: string): string {
  const w = ` ${word.toLowerCase().replace(/[^a-z']/g, '')} `;
  const phones: string[] = [];
  let i = 1;
  while (i < w.length - 1) {
    const rules = RULES[w[i]!];
    let done = false;
    for (const [left, match, right, out] of rules ?? []) {
      if (!w.startsWith(match, i)) continue;
      if (left && !matches(w, i - 1, left, -1)) continue;
      if (right && !matches(w, i + match.length, right, 1)) continue;
      if (out) phones.push(...out.split(' '));
      i += match.length;
      done = true;
      break;
    }
    if (!done) i++;
  }
  // Doubled phones across a rule boundary ("hall-l") are said once.
  return phones.filter((p, j) => p !== phones[j - 1]).join(' ');
}
