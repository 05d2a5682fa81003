/**
 * The words of a transcript, as the turn-taking reads them: what the caller has heard of the agent (playback.ts),
 * how finished an utterance reads (turn/endpointing.ts) and whether caller speech over the agent is only a
 * backchannel (turn/). It lies in pipeline/, below the stage families, because the playback here reads it too.
 */
const BACKCHANNELS = new Set([
  'yeah',
  'yea',
  'yeh',
  'yah',
  'ya',
  'yes',
  'yep',
  'yup',
  'ok',
  'okay',
  'okey',
  'okie',
  'k',
  'kay',
  'mkay',
  'alrighty',
  'righto',
  'indeed',
  'gotcha',
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
const HUM = /^(?:h?m+|m+-?h+m+(?:-?h*m+)*|u+h+-?h+u+h+|u+m+-?h+u+m+|u+h+-?h+u+m+|a+h+a+)$/;

/**
 * Short words a caller may mean over the agent ("no", "stop", "wait", "why"), and other common ones of up to three
 * letters: a one-word transcript of three letters or fewer that is none of these is a hum the recogniser turned into
 * a word ("uh-huh" heard as "op" by the local engine), not speech for the agent.
 */
const SHORT_WORDS = new Set(
  (
    'a i an am as at be by do go he hi if in is it me my no of oh on or so to up us we ' +
    'add age ago aid aim air all and any are arm art ask ate bad bag bar bed bet big bit box boy bus but buy bye ' +
    'can car cat cut dad day did die dog dry due eat egg end eye far fax fee few fit fix fly for fun gas get god ' +
    'got guy had has hat her hey him his hit hot how hum ham ice ill its job key kid law lay led leg let lie lot ' +
    'low mad man map may men met mix mom mum new nor not now odd off oil old one our out owe own pay pen per pet ' +
    'pin put ran raw red rid run sad sat saw say sea see set she sir sit six ski sky son sun tax tea ten the tie ' +
    'tip too top try two use van via war was way web wet who why win won yes yet you zip bye wow nah nay nope'
  ).split(' '),
);

/** A word of three letters or fewer that is not a word: what a recogniser makes of a hum, a breath or a click. */
const nonWord = (w: string) => /^\p{L}{1,3}$/u.test(w) && !SHORT_WORDS.has(w);

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
  return onlyListening(text, false);
}

/**
 * The words are all backchannel words or hums (and, with `nonWords`, short non-words): at most three, or a
 * backchannel repeated ("yeah yeah yeah yeah", "okay okay": up to eight words of at most two kinds).
 */
function onlyListening(text: string, nonWords: boolean): boolean {
  const w = words(text).flatMap((x) => (HUM.test(x) ? [x] : x.split('-')));
  const short = w.length <= 3 || (w.length <= 8 && new Set(w).size <= 2);
  return w.length > 0 && short && w.every((x) => BACKCHANNELS.has(x) || HUM.test(x) || (nonWords && nonWord(x)));
}

/** Not speech for the agent: a backchannel ("mm-hm", "yeah yeah") or a hum heard as a short non-word ("op"). */
export function isListening(text: string): boolean {
  // Two backchannels said close together reach the STT as one transcript ("Mm-hmm. op"): each word is one.
  return onlyListening(text, true);
}
