/**
 * Cepstral mean normalisation carried from one decoder run to the next. pocketsphinx's live CMN starts every run
 * from the model's `-cmninit` and adapts as it hears speech, so a fresh decoder mis-hears the first utterance of a
 * piece cut from the middle of a recording (measured: "can you tell me the way" → "and you don't need a way").
 * Starting the next piece from the mean the previous run ended with gives it what one whole-file run would have
 * had. The command line's `-cmninit` loses to the model's feat.params, so the carried mean goes in through a copy
 * of feat.params (`-featparams`).
 */

const UPDATE_TO = /cmn_live\.c\(\d+\): Update to\s+<([^>]*)>/g;

/** The last cepstral mean a decoder log reports (`-cmninit` syntax: comma-separated), or null if none. */
export function lastCepstralMean(log: string): string | null {
  let last: string | null = null;
  for (const m of log.matchAll(UPDATE_TO)) last = m[1]!.trim().split(/\s+/).join(',');
  return last && /^-?\d+(\.\d+)?(,-?\d+(\.\d+)?)*$/.test(last) ? last : null;
}

/** The model's feat.params with its `-cmninit` replaced by `mean` (or added). */
export function withCmnInit(featParams: string, mean: string): string {
  const lines = featParams.split('\n').filter((l) => !/^-cmninit\s/.test(l) && l !== '');
  return `${[...lines, `-cmninit ${mean}`].join('\n')}\n`;
}
