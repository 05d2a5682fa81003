/**
 * What the turn-taking benchmark's callers say (the Deepgram double's script and the callers' flite audio agree on
 * it, line for line). ` | ` separates the groups of something read out: the caller pauses 0.6–1.5 s between them.
 */
export const ENTITIES = [
  { kind: 'phone', text: 'My number is four one five. | Five five five. | Zero one three four.' },
  { kind: 'email', text: 'My email is john dot smith | at example | dot com.' },
  { kind: 'spelled', text: 'My surname is Kowalski, K O W. | A L S. | K I.' },
] as const;

export const QUESTION = 'Tell me everything about your opening hours.';
export const BARGE_IN = 'Wait, stop.';

/**
 * Backchannels as a streaming STT writes them, in many spellings and repetitions, and hums a recogniser turned into
 * a short non-word (`op`, `hrm`). `say` is what the caller's flite voice says for it (a hum is said as "mm hmm").
 */
export const BACKCHANNELS: Array<{ heard: string; say: string }> = [
  { heard: 'Mm-hmm.', say: 'mm hmm' },
  { heard: 'Uh-huh.', say: 'uh huh' },
  { heard: 'Yeah.', say: 'yeah' },
  { heard: 'Okay.', say: 'okay' },
  { heard: 'Right.', say: 'right' },
  { heard: 'op', say: 'mm hmm' },
  { heard: 'Mhm.', say: 'mm hmm' },
  { heard: 'Yeah, yeah.', say: 'yeah yeah' },
  { heard: 'Okay, okay.', say: 'okay okay' },
  { heard: 'Uh huh.', say: 'uh huh' },
  { heard: 'Mm-hm.', say: 'mm hmm' },
  { heard: 'Right, right, right.', say: 'right right right' },
  { heard: 'hrm', say: 'hmm' },
  { heard: 'Yep.', say: 'yep' },
  { heard: 'Yeah, yeah, yeah, yeah.', say: 'yeah yeah yeah yeah' },
  { heard: 'Okey.', say: 'okay' },
  { heard: 'Uh-hum.', say: 'uh hum' },
  { heard: 'Mmhmm', say: 'mm hmm' },
  { heard: 'Hmm.', say: 'hmm' },
  { heard: 'ok', say: 'okay' },
];

/** Script line `u` of every call: the three entities, the question, `backchannels` of them, the barge-in. */
export function line(u: number, backchannels: number): string {
  if (u < ENTITIES.length) return ENTITIES[u]!.text;
  if (u === ENTITIES.length) return QUESTION;
  const k = u - ENTITIES.length - 1;
  if (k < backchannels) return BACKCHANNELS[k % BACKCHANNELS.length]!.heard;
  return BARGE_IN;
}

/** The pause of call `i` before group `g` of entity `e`: 600–1500 ms in 100 ms steps, spread over calls. */
export function pauseMs(i: number, e: number, g: number): number {
  return 600 + ((i * 7 + e * 3 + g * 5) % 10) * 100;
}
