import { describe, expect, it } from 'vitest';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { breakLongTokens, hasOverlongWord, MAX_WORD_CHARS, speakableText } from '../../shared/engines/tts/speakable.ts';
import { MAX_PIECE_CHARS, splitForSynthesis } from '../../shared/engines/tts/text-chunks.ts';

/**
 * Issue #35 item 3: one 9,000-letter word kept the flite workers spelling it out for minutes. A word (letters,
 * marks, digits) longer than MAX_WORD_CHARS is refused by the local engine, cut short where speech must not fail,
 * and no piece handed to flite is longer than MAX_PIECE_CHARS.
 */
describe('speakable text', () => {
  const word = (n: number, c = 'a') => c.repeat(n);

  it('finds a word over the limit in letters or digits, not in scripts written without spaces', () => {
    expect(hasOverlongWord(`hello ${word(MAX_WORD_CHARS)} there`)).toBe(false);
    expect(hasOverlongWord(`hello ${word(MAX_WORD_CHARS + 1)} there`)).toBe(true);
    expect(hasOverlongWord(word(9000))).toBe(true);
    expect(hasOverlongWord(word(200, '7'))).toBe(true);
    expect(hasOverlongWord('Zürich-Flughafen-Donaudampfschifffahrtsgesellschaftskapitän')).toBe(false);
    expect(hasOverlongWord('東京は日本の首都です。'.repeat(20))).toBe(false);
    expect(hasOverlongWord('https://example.com/some/long/path/that-is/longer/than_64/chars/index.html')).toBe(false);
  });

  it('cuts each word over the limit to the limit (live calls, dubbing) and leaves other text alone', () => {
    const text = `Your code is ${word(9000, 'x')} and ${word(100, '9')}, thanks.`;
    expect(speakableText(text)).toBe(
      `Your code is ${word(MAX_WORD_CHARS, 'x')} and ${word(MAX_WORD_CHARS, '9')}, thanks.`,
    );
    expect(speakableText('An ordinary sentence.')).toBe('An ordinary sentence.');
  });

  it('breaks a long token without spaces after its punctuation, so it can be cut between words', () => {
    expect(
      breakLongTokens('see https://example.com/a/very/long/path/to/somewhere/far/away/from/here/index.html ok'),
    ).toBe('see https:// example. com/ a/ very/ long/ path/ to/ somewhere/ far/ away/ from/ here/ index. html ok');
    for (const part of breakLongTokens('/'.repeat(9000)).split(' ')) expect(part.length).toBeLessThanOrEqual(64);
  });

  it('never hands flite a piece longer than MAX_PIECE_CHARS, whatever the text', () => {
    const texts = [
      'ab/'.repeat(3000),
      Array.from({ length: 300 }, (_, i) => String(1000 + i)).join(' '),
      `${word(64, 'q')} `.repeat(150),
      'Sentence one is here. '.repeat(400),
    ];
    for (const t of texts) {
      const pieces = splitForSynthesis(t);
      expect(pieces.length).toBeGreaterThan(1);
      for (const p of pieces) expect(p.length).toBeLessThanOrEqual(MAX_PIECE_CHARS);
    }
  });
});

describe('LocalTtsEngine and long words', () => {
  it('refuses a 9,000-letter word before any work, without repeating it', async () => {
    const e = new LocalTtsEngine();
    try {
      const err = await e.synthesize({ text: word9000(), voiceId: 'default', speed: 1, pitch: 1 }).catch((x) => x);
      expect(err).toMatchObject({ name: 'EngineError', kind: 'invalid_input', param: 'text' });
      expect(err.message).toMatch(/longer than 64 letters or digits/);
      expect(err.message).not.toMatch(/aaaa/);
    } finally {
      e.close();
    }
  });

  it('speaks a long token without spaces in bounded pieces: it completes, one piece of audio per piece of text', async () => {
    const e = new LocalTtsEngine();
    try {
      const text = 'ab/'.repeat(200); // 600 characters, no space
      const audio = await e.synthesize({ text, voiceId: 'default', speed: 1, pitch: 1 });
      let seconds = 0;
      let chunks = 0;
      for await (const c of audio.chunks) {
        seconds += c.length / 2 / audio.sampleRate;
        chunks++;
      }
      expect(chunks).toBe(splitForSynthesis(text).length);
      expect(chunks).toBeGreaterThan(2);
      // 200 spoken "ab slash": well under two seconds each.
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThan(200 * 2);
    } finally {
      e.close();
    }
  });
});

function word9000(): string {
  return 'a'.repeat(9000);
}
