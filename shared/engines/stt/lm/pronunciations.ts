import { readFile } from 'node:fs/promises';
import { compoundPronunciation } from './compound.ts';
import { letterToSound } from './letter-to-sound.ts';

/** Pronunciations by word (every variant, in the dictionary's order), from a CMU-format dictionary file. */
export type Pronunciations = Map<string, string[]>;

const loaded = new Map<string, Promise<Pronunciations>>();

/** The dictionary at `path` (Debian's cmudict-en-us.dict), read once per process. */
export function loadPronunciations(path: string): Promise<Pronunciations> {
  let p = loaded.get(path);
  if (!p) {
    p = readFile(path, 'utf8').then(parseDictionary);
    p.catch(() => loaded.delete(path));
    loaded.set(path, p);
  }
  return p;
}

export function parseDictionary(text: string): Pronunciations {
  const out: Pronunciations = new Map();
  for (const line of text.split('\n')) {
    const m = /^(\S+?)(?:\(\d+\))?\s+(.+)$/.exec(line);
    if (!m) continue;
    const list = out.get(m[1]!);
    if (list) list.push(m[2]!.trim());
    else out.set(m[1]!, [m[2]!.trim()]);
  }
  return out;
}

/**
 * The dictionary of one model: every word of its vocabulary with the reference's pronunciations; a word the reference
 * lacks gets the pronunciation of the two known words it is made of, when it is made of two (./compound.ts), and the
 * letter-to-sound rules' (a variant the decoder may pick instead). Returns the file's text and the words guessed.
 */
export function dictionaryFor(words: Iterable<string>, reference: Pronunciations): { text: string; guessed: string[] } {
  const lines: string[] = [];
  const guessed: string[] = [];
  for (const w of words) {
    if (w === '<s>' || w === '</s>' || w === '<unk>') continue;
    const known = reference.get(w);
    if (known) {
      known.forEach((p, i) => lines.push(i === 0 ? `${w} ${p}` : `${w}(${i + 1}) ${p}`));
      continue;
    }
    const guesses = [...new Set([compoundPronunciation(w, reference), letterToSound(w)])].filter(
      (p): p is string => !!p,
    );
    if (!guesses.length) continue;
    guessed.push(w);
    guesses.forEach((p, i) => lines.push(i === 0 ? `${w} ${p}` : `${w}(${i + 1}) ${p}`));
  }
  return { text: `${lines.join('\n')}\n`, guessed };
}
