import { z } from 'zod';

/**
 * The plug-in seams of a voice call that an agent chooses by name (issue 30): the turn detector (when the caller's
 * turn ends), the interruption detector (whether caller speech over the agent is a barge-in) and the input
 * processors (caller audio before the VAD and the STT). Each catalogue below maps an implementation's name to the
 * schema of its settings; the realtime role registers one factory per name (workers/realtime/pipeline/turn/ and
 * pipeline/input/), and its registries are typed against these catalogues, so a name without an implementation (or
 * the reverse) does not compile. An unknown name in an agent is a 400 naming the known ones. See docs/realtime.md,
 * "Turn-taking seams".
 */

/** One implementation's settings: its `name` and its own options, nothing else. */
type Choice = z.ZodObject<{ name: z.ZodLiteral<string> } & z.ZodRawShape>;

/** The schema an agent names one implementation of a seam with: one of the catalogue's, told apart by `name`. */
function choiceOf<C extends Record<string, Choice>>(seam: string, catalogue: C) {
  const names = Object.keys(catalogue);
  const options = Object.values(catalogue) as [C[keyof C], ...C[keyof C][]];
  return z.discriminatedUnion('name', options, {
    error: (iss) => (iss.code === 'invalid_union' ? `${seam}: name must be one of ${names.join(', ')}` : undefined),
  });
}

// ── turn detector ───────────────────────────────────────────────────────────────────────────────────────────────
export const TURN_DETECTORS = {
  default: z
    .object({ name: z.literal('default') })
    .strict()
    .describe(
      "The platform's end-of-turn decision: silence windows set by the words (endpointingMs, completeMs, " +
        'incompleteMs, eagerness), the STT lag and the prosody of the end of the speech.',
    ),
  'entity-hold': z
    .object({
      name: z.literal('entity-hold'),
      holdMs: z
        .number()
        .int()
        .min(600)
        .max(4000)
        .optional()
        .describe(
          'Silence that ends the turn while a number, address, spelled name or date is being read (default 1800)',
        ),
      hesitationMs: z
        .number()
        .int()
        .min(600)
        .max(5000)
        .optional()
        .describe('Silence that ends the turn after a hesitation ("um", "let me see") (default 2500)'),
    })
    .strict()
    .describe(
      "`default`'s windows, plus holds while the caller reads out a phone, card or order number, an e-mail address, " +
        'a spelled name or a date: pauses between groups do not end the turn until it reads complete (ten digits, ' +
        '"dot com", the letters of the name said before them, a month and its day), then the short window.',
    ),
};
export const TurnDetectorChoice = choiceOf('turnTaking.detector', TURN_DETECTORS);
export type TurnDetectorChoice = z.infer<typeof TurnDetectorChoice>;

// ── interruption detector ───────────────────────────────────────────────────────────────────────────────────────
const MinMs = z
  .number()
  .int()
  .min(60)
  .max(2000)
  .optional()
  .describe('Caller speech shorter than this never interrupts (default REALTIME_BARGE_IN_MIN_MS)');
const ForceMs = z
  .number()
  .int()
  .min(200)
  .max(5000)
  .optional()
  .describe('Caller speech this long interrupts before its words are in (default REALTIME_BARGE_IN_FORCE_MS)');

const WordsPhase = z.object({ minMs: MinMs, forceMs: ForceMs }).strict();
const VadPhase = z.object({ minMs: MinMs }).strict();
const PHASES = 'speaking: while agent audio plays; thinking: while its reply is being made, before any audio';

export const INTERRUPTION_DETECTORS = {
  default: z
    .object({
      name: z.literal('default'),
      speaking: WordsPhase.optional(),
      thinking: WordsPhase.optional(),
      resumeFalseStarts: z
        .boolean()
        .optional()
        .describe(
          'true: speech past forceMs with no words yet stops the agent tentatively, and the agent resumes where it ' +
            'stopped when no words (or only a backchannel or hum) come; default false: it is a barge-in, as before',
        ),
    })
    .strict()
    .describe(
      'Speech of at least minMs whose words are not a backchannel ("yeah", "mm-hm", "I see") interrupts, and so ' +
        `does any speech past forceMs that is not a backchannel. ${PHASES}.`,
    ),
  'vad-only': z
    .object({ name: z.literal('vad-only'), speaking: VadPhase.optional(), thinking: VadPhase.optional() })
    .strict()
    .describe(
      'Any speech the VAD hears for minMs interrupts, whatever its words (a backchannel too): the fastest ' +
        `barge-in, for agents whose callers rarely backchannel. ${PHASES}.`,
    ),
  'line-contrast': z
    .object({
      name: z.literal('line-contrast'),
      speaking: WordsPhase.optional(),
      thinking: WordsPhase.optional(),
      resumeFalseStarts: z.boolean().optional().describe("As default's"),
      marginDb: z
        .number()
        .min(3)
        .max(30)
        .optional()
        .describe(
          "How far over the line's level before it caller speech must stand to interrupt at all (default 8 dB)",
        ),
    })
    .strict()
    .describe(
      "default's rule, for speech that stands out from the line: background voices (a crowd, a television) heard " +
        'at the level the line carried before them never interrupt, whatever their words or length; the caller, ' +
        `louder than the line by the call's SNR, interrupts as with default. ${PHASES}.`,
    ),
};
export const InterruptionChoice = choiceOf('turnTaking.interruption', INTERRUPTION_DETECTORS);
export type InterruptionChoice = z.infer<typeof InterruptionChoice>;

// ── input processors ────────────────────────────────────────────────────────────────────────────────────────────
export const INPUT_PROCESSORS = {
  passthrough: z
    .object({ name: z.literal('passthrough') })
    .strict()
    .describe('The caller audio as it arrives (what an agent without input processors gets).'),
  highpass: z
    .object({
      name: z.literal('highpass'),
      cutoffHz: z.number().min(20).max(300).optional().describe('The corner frequency (default 100 Hz)'),
    })
    .strict()
    .describe('A first-order high-pass filter: removes mains hum (50/60 Hz) and a DC offset, keeps the voice.'),
  rnnoise: z
    .object({ name: z.literal('rnnoise') })
    .strict()
    .describe(
      'Noise suppression by RNNoise (a small recurrent network, WebAssembly): steady background noise (fan, car, ' +
        'line hiss, crowd) taken down under the voice. Adds 15 ms of delay; see docs/realtime.md for its cost.',
    ),
};
export const InputProcessorChoice = choiceOf('audio.inputProcessors', INPUT_PROCESSORS);
export type InputProcessorChoice = z.infer<typeof InputProcessorChoice>;

/** Caller-audio settings of an agent (extension): the input processors, applied in order before the VAD and STT. */
export const AudioSettings = z
  .object({ inputProcessors: z.array(InputProcessorChoice).max(4).optional() })
  .strict()
  .describe('Caller audio processing on voice calls; unset = the audio as it arrives. See docs/realtime.md.');
export type AudioSettings = z.infer<typeof AudioSettings>;
