/**
 * The words of a transcript, as the turn-taking reads them: what the caller has heard of the agent (playback.ts),
 * how finished an utterance reads (turn/endpointing.ts) and whether caller speech over the agent is only a
 * backchannel (turn/). It lies in pipeline/, below the stage families, because the playback here reads it too.
 */
const BACKCHANNELS = new Set([
  'yeah',
  'yes',
  'yep',
  'yup',
  'ok',
  'okay',
  'right',
  'sure',
  'uh-huh',
  'uh',
  'huh',
  'um',
  'hmm',
  'mm',
  'mhm',
  'mm-hmm',
  'ah',
  'oh',
  'alright',
  'cool',
  'great',
  'got',
  'it',
  'i',
  'see',
  'true',
  'exactly',
  'nice',
]);

/**
 * A hum of assent however an STT spells it: "mm", "hm", "hmm", "mhm", "mhmm", "mm-hm", "mmhmm", "uh-huh",
 * "uhhuh", "um-hum". Spellings vary by vendor and by how long the caller hums, so they are matched by shape (an
 * agent cut off by "mm-hm" because the list had only "mm-hmm" was found by an agent test's backchannels).
 */
const HUM = /^(?:h?m+|m+-?h+m+|u+h+-?h+u+h+|u+m+-?h+u+m+)$/;

/** Words of a transcript, lower-cased, punctuation stripped. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'\s-]/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/**
 * True when a transcript is only a backchannel ("yeah", "ok", "uh-huh", "I see", "got it"): the caller is
 * listening, not taking the turn, so it must not interrupt the agent.
 */
export function isBackchannel(text: string): boolean {
  const w = words(text);
  return w.length > 0 && w.length <= 3 && w.every((x) => BACKCHANNELS.has(x) || HUM.test(x));
}
