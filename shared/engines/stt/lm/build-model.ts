import { join } from 'node:path';
import { toArpa } from './arpa.ts';
import { loadBackground, type BackgroundSize } from './background.ts';
import { conversationBase } from './conversation-base.ts';
import { buildDomainModel } from './domain-model.ts';
import { textToSentences } from './domain-text.ts';
import { interpolate } from './interpolate.ts';
import { MAX_VOCAB } from './ngram-model.ts';
import { dictionaryFor, loadPronunciations } from './pronunciations.ts';

/**
 * Weight of the in-domain model (agent words + conversational base) against the general one. 0.15: at 0.2 and more
 * the agent's words crept into speech that is not about the agent (LibriVox, accurate: 38.0-39.4 % at 0.2, 38.0 %
 * at 0.3, 43.7 % at 0.5, against 36.6 % for the general model and 35.2 % at 0.1-0.15), while the in-domain
 * questions lost less to the lower weight (16.4 % at 0.15 with the biased fast settings) than to the narrow beams
 * that the search had before (benchmarks/local-stt/README.md, "What each change did").
 */
export const DOMAIN_WEIGHT = 0.15;

/** Most distinct words taken from the agent's text (the most frequent first): bounds the model and dictionary. */
export const MAX_DOMAIN_WORDS = 5000;

export interface ModelInput {
  /** The agent's own words (prompt, first message, tools, variables, collection text), already capped in size. */
  text: string;
  /** Folder of Debian's pocketsphinx-en-us (en-us.lm.bin, cmudict-en-us.dict). */
  modelDir: string;
  background?: BackgroundSize;
  /** Where the pruned general model is kept between builds (background-cache.ts); pruned afresh when absent. */
  cacheDir?: string;
  /** Weight of the in-domain side (default DOMAIN_WEIGHT). */
  domainWeight?: number;
}

export interface ModelFiles {
  arpa: string;
  dict: string;
  stats: { words: number; domainWords: number; guessedWords: number; ngrams: number[] };
}

/** Builds the per-agent model: the domain model of `text` + the conversational base, interpolated with the general. */
export async function buildModelFiles(input: ModelInput): Promise<ModelFiles> {
  const [background, reference] = await Promise.all([
    loadBackground(join(input.modelDir, 'en-us.lm.bin'), input.background, input.cacheDir),
    loadPronunciations(join(input.modelDir, 'cmudict-en-us.dict')),
  ]);
  const agentSentences = textToSentences(input.text);
  // The agent's vocabulary, most frequent first, capped; sentences keep only words inside it (a word dropped by
  // the cap ends the n-gram run there).
  const freq = new Map<string, number>();
  for (const s of agentSentences) for (const w of s) freq.set(w, (freq.get(w) ?? 0) + 1);
  const allowed = new Set(
    [...freq.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, MAX_DOMAIN_WORDS)
      .map(([w]) => w),
  );
  const sentences: string[][] = [];
  for (const s of agentSentences) {
    let run: string[] = [];
    for (const w of s) {
      if (allowed.has(w)) {
        run.push(w);
      } else if (run.length) {
        sentences.push(run);
        run = [];
      }
    }
    if (run.length) sentences.push(run);
  }
  sentences.push(...textToSentences(conversationBase()));

  const words = [...background.words];
  const ids = new Map(words.map((w, i) => [w, i]));
  const idOf = (w: string): number => {
    let id = ids.get(w);
    if (id === undefined) {
      if (words.length >= MAX_VOCAB) throw new Error('vocabulary too large');
      id = words.length;
      words.push(w);
      ids.set(w, id);
    }
    return id;
  };
  const domain = buildDomainModel(sentences, idOf);
  const mixed = interpolate(domain, background.model, input.domainWeight ?? DOMAIN_WEIGHT, idOf('<s>'));
  const { text: dict, guessed } = dictionaryFor(words, reference);
  return {
    arpa: toArpa(mixed, words),
    dict,
    stats: {
      words: words.length,
      domainWords: domain.orders[0]!.size,
      guessedWords: guessed.length,
      ngrams: mixed.orders.map((m) => m.size),
    },
  };
}
