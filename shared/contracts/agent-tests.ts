import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { unsafeKeyReason } from '../kernel/storage/keys.ts';
import { MAX_PATTERN_CHARS, PatternError } from '../kernel/re2-pattern.ts';
import { compilePattern } from './scenario-pattern.ts';
import { NOISE_TYPES } from '../kernel/audio/noise.ts';
import { SessionTurn, SessionVariables } from './sessions.ts';

/**
 * Agent test scenarios (issue #21): a scripted caller, an optional scripted LLM, seeded line impairments and the
 * expectations a run checks. Files are YAML or JSON (YAML is a superset, so one parser reads both).
 *
 * Patterns are RE2 regular expressions (scenario-pattern.ts: linear-time matching, whatever a tenant writes); a
 * leading `(?i)` makes the match case-insensitive. The schema checks that every pattern compiles, so a bad one is a
 * 400 or a CLI error before any call starts.
 */

/** Ledger provider prefix of an agent test's calls (`agent-test:deepgram`, …): test traffic in usage. */
export const TEST_TRAFFIC_PROVIDER_PREFIX = 'agent-test:';

export { compilePattern } from './scenario-pattern.ts';

const Pattern = z
  .string()
  .min(1)
  .max(MAX_PATTERN_CHARS, `a pattern has at most ${MAX_PATTERN_CHARS} characters`)
  .superRefine((p, ctx) => {
    if (p.length > MAX_PATTERN_CHARS) return;
    try {
      compilePattern(p);
    } catch (e) {
      if (!(e instanceof PatternError)) throw e;
      ctx.addIssue({ code: 'custom', message: `not a valid pattern: ${e.message}` });
    }
  })
  .describe('An RE2 regular expression (no backreferences or lookaround); a leading (?i) makes it case-insensitive.');

export const ScriptedToolReply = z
  .object({
    tool: z.string().min(1).max(64),
    args: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
export type ScriptedToolReply = z.infer<typeof ScriptedToolReply>;

export const ScriptedLlm = z
  .object({
    /** One entry per LLM request, in order: text to say, or a tool call. Past the end, the last text repeats. */
    replies: z
      .array(z.union([z.string().min(1).max(2000), ScriptedToolReply]))
      .min(1)
      .max(100),
  })
  .strict();
export type ScriptedLlm = z.infer<typeof ScriptedLlm>;

/** A backchannel is a short acknowledgement: up to three words, letters and hyphens (`mm-hmm`, `I see`). */
const BackchannelWord = z
  .string()
  .max(40)
  .regex(/^[\p{L}'’-]+( [\p{L}'’-]+){0,2}$/u, 'up to three words of letters, hyphens or apostrophes');

export const Backchannels = z
  .object({
    /**
     * About how often, while the agent speaks: each gap is this ±40 % (seeded). A backchannel is said only over
     * agent audio still to play (it never runs into the caller's next turn or the agent's silence).
     */
    everyMs: z.number().int().min(1000).max(30_000).default(2500),
    /** What the caller says, one picked at random (seeded) each time. */
    words: z.array(BackchannelWord).min(1).max(20).default(['mm-hmm', 'uh-huh', 'okay', 'right', 'yeah']),
  })
  .strict();
export type Backchannels = z.infer<typeof Backchannels>;

/** Line noise of a kind (shared/kernel/audio/noise.ts), this many dB under the caller's speech, on every frame. */
export const LineNoise = z
  .object({
    type: z.enum(NOISE_TYPES),
    snrDb: z.number().min(-10).max(60),
  })
  .strict();
export type LineNoise = z.infer<typeof LineNoise>;

export const Impairments = z
  .object({
    /** Background noise this many dB below the caller's speech (white noise, on every frame). */
    noiseSnrDb: z.number().min(-10).max(60).optional(),
    /**
     * Background noise of a kind: white (hiss), pink (room, car), babble (voices: the scenario's own caller lines,
     * several at once), hum (50 Hz mains and harmonics), crackle (clicks in bursts), music (a generated score).
     */
    noise: LineNoise.optional(),
    /** Share of 20 ms media frames never sent (0-50). */
    packetLossPct: z.number().min(0).max(50).optional(),
    /** Each frame is held back 0..jitterMs (uniform), so frames arrive unevenly and may reorder. */
    jitterMs: z.number().int().min(0).max(500).optional(),
    /**
     * Word error rate of the simulated STT (0–0.5): substitutions, deletions and insertions in equal shares, seeded,
     * the same in a turn's interims and final. Offline runs only (a real STT makes its own errors).
     */
    sttWordErrorRate: z.number().min(0).max(0.5).optional(),
    /**
     * Hard clipping of the caller's voice (0–50): the share of its voiced samples that overdrive the handset's
     * converter. The voice is amplified until that share passes the level of its loudest sample, and flattened
     * there, as a caller too loud for the line sounds: louder, square-topped speech.
     */
    clipPct: z.number().min(0).max(50).optional(),
    /** The caller acknowledges the agent ("mm-hmm", "okay") while it speaks: these must not take the turn. */
    backchannels: Backchannels.optional(),
    /** The PRNG seed: the same seed gives the same noise, losses, delays and backchannels. */
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .default(1),
  })
  .strict()
  .refine((i) => i.noiseSnrDb === undefined || i.noise === undefined, {
    message: 'give noise or noiseSnrDb, not both (noiseSnrDb: N is noise: {type: white, snrDb: N})',
    path: ['noise'],
  });
export type Impairments = z.infer<typeof Impairments>;

export const TurnExpect = z
  .object({
    replyMatches: Pattern.optional(),
    replyNeverMatches: Pattern.optional(),
    /** The agent did not start speaking while the caller only paused mid-sentence. */
    noCutIn: z.boolean().optional(),
    /** Caller's last word → agent's first audio, as the caller hears it. */
    maxLatencyMs: z.number().int().min(1).max(60_000).optional(),
  })
  .strict();
export type TurnExpect = z.infer<typeof TurnExpect>;

/**
 * A caller leg given as audio instead of words: a WAV file (any rate, PCM or μ-law; resampled to the phone's 8 kHz)
 * or raw 8 kHz μ-law, from exactly one place. `transcript` is what the caller says in it: an offline run's simulated
 * STT "hears" that text on the audio's clock (it cannot hear the audio itself), and the result shows it.
 */
export const TurnAudio = z
  .object({
    /** An https URL, fetched SSRF-safely by the platform. */
    url: z.string().url().max(2000).optional(),
    /** A file path, relative to the scenario file (the CLI only; the REST API refuses it). */
    file: z.string().min(1).max(1000).optional(),
    /**
     * An object key in the developer's own storage (e.g. a call recording's caller leg): a name, never a path (no
     * `.`, `..` or empty segments, backslashes, percent-encoding or control characters).
     */
    key: z
      .string()
      .min(1)
      .max(1000)
      .superRefine((k, ctx) => {
        const why = unsafeKeyReason(k);
        if (why !== null) ctx.addIssue({ code: 'custom', message: `not an object key: it ${why}` });
      })
      .optional(),
    /** `wav` (the default) or `mulaw` (headerless 8 kHz μ-law, as Twilio carries it). */
    format: z.enum(['wav', 'mulaw']).default('wav'),
    /** Where in the audio the caller's leg starts and ends, ms (a turn cut out of a longer recording). */
    startMs: z.number().int().min(0).optional(),
    endMs: z.number().int().min(1).optional(),
    transcript: z.string().max(5000).optional(),
  })
  .strict()
  .refine((a) => [a.url, a.file, a.key].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of url, file or key',
  })
  .refine((a) => a.startMs === undefined || a.endMs === undefined || a.endMs > a.startMs, {
    message: 'endMs must be after startMs',
  });
export type TurnAudio = z.infer<typeof TurnAudio>;

export const ScenarioTurn = z
  .object({
    /** The caller's words, synthesized by the local flite voice `callerVoice` (at 8 kHz, what a phone line carries). */
    say: z.string().min(1).max(1000).optional(),
    /** Or the caller's leg as audio (a recorded call's, a file): spoken as given, in real time. */
    audio: TurnAudio.optional(),
    /** `{3: 500}`: a 500 ms pause after the third word (mid-sentence). `say` turns only. */
    pauseAfterWords: z
      .record(z.string().regex(/^[1-9]\d{0,2}$/, 'a word number (1, 2, …)'), z.number().int().min(1).max(10_000))
      .optional(),
    /** Speak this long into the agent's reply (a barge-in) instead of waiting for it to finish. */
    bargeInAfterMs: z.number().int().min(0).max(60_000).optional(),
    /** Wait this long after the agent's reply before speaking (a long silence on the line). */
    silenceBeforeMs: z.number().int().min(0).max(60_000).optional(),
    expect: TurnExpect.optional(),
  })
  .strict()
  .refine((t) => (t.say === undefined) !== (t.audio === undefined), {
    message: 'a turn needs exactly one of say (words) or audio (a recorded leg)',
  })
  .refine((t) => t.audio === undefined || t.pauseAfterWords === undefined, {
    message: 'pauseAfterWords applies to say turns only (an audio turn keeps its own pauses)',
    path: ['pauseAfterWords'],
  });
export type ScenarioTurn = z.infer<typeof ScenarioTurn>;

export const ENDED_BY = ['caller', 'agent'] as const;

export const ScenarioExpect = z
  .object({
    toolCalled: z
      .object({ name: z.string().min(1).max(64) })
      .strict()
      .optional(),
    replyNeverMatches: Pattern.optional(),
    replyMatches: Pattern.optional(),
    endedBy: z.enum(ENDED_BY).optional(),
    maxCredits: z.number().min(0).optional(),
    /** No backchannel (impairments.backchannels) interrupted the agent or was taken as a caller turn. */
    ignoresBackchannels: z.boolean().optional(),
  })
  .strict();
export type ScenarioExpect = z.infer<typeof ScenarioExpect>;

/** The local flite voices a scenario's caller can speak with (`flite -lv`, less the limited-domain `awb_time`). */
export const CALLER_VOICES = ['kal', 'kal16', 'awb', 'rms', 'slt'] as const;

export const Scenario = z
  .object({
    name: z.string().min(1).max(200),
    /** `twilio`: a phone call over the media-stream socket; `websocket`: the direct protocol (16 kHz PCM). */
    transport: z.enum(['twilio', 'websocket']).default('twilio'),
    /**
     * The caller's voice for `say` turns and backchannels: one of the local flite voices (`kal`, a man, 8 kHz;
     * `kal16`, the same at 16 kHz; `awb`, a Scottish man; `rms`, an American man; `slt`, an American woman). Any
     * other voice, a vendor's included: give the turn as `audio`.
     */
    callerVoice: z.enum(CALLER_VOICES).default('kal'),
    /** The scripted LLM; without it the agent's own LLM answers (a vendor's at real cost, metered as test traffic). */
    llm: ScriptedLlm.optional(),
    impairments: Impairments.optional(),
    /** The call's template variables: `{{name}}` in the agent's prompt and first message, as a real call's. */
    variables: SessionVariables.optional(),
    turns: z.array(ScenarioTurn).min(1).max(50),
    expect: ScenarioExpect.optional(),
  })
  .strict()
  .refine((s) => !s.expect?.ignoresBackchannels || s.impairments?.backchannels !== undefined, {
    message: 'needs impairments.backchannels (the caller says none otherwise)',
    path: ['expect', 'ignoresBackchannels'],
  });
export type Scenario = z.infer<typeof Scenario>;

/** A file holds one scenario, a list of them, or `{scenarios: [...]}`. */
export const ScenarioFile = z.union([
  Scenario,
  z.array(Scenario).min(1),
  z.object({ scenarios: z.array(Scenario).min(1) }).strict(),
]);

/** JSON Schema of a scenario file, as GET /v1/agent-tests/schema serves it. */
export function scenarioJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ScenarioFile, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

export class ScenarioFileError extends Error {}

/** Parses a scenario file's text (YAML or JSON) into scenarios; a ScenarioFileError names the bad fields. */
export function parseScenarioFile(text: string, source = 'scenario file'): Scenario[] {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    // The parser's message ends with the offending lines quoted: keep what and where, not the text itself.
    const what = (e as Error).message.split('\n')[0]!.replace(/:\s*$/, '');
    throw new ScenarioFileError(`${source}: not YAML or JSON: ${what}`);
  }
  // Parsed by shape rather than through the union, so an error names the scenario's own fields.
  const shape = Array.isArray(raw)
    ? z.array(Scenario).min(1)
    : raw && typeof raw === 'object' && 'scenarios' in raw
      ? z.object({ scenarios: z.array(Scenario).min(1) }).strict()
      : Scenario;
  const r = shape.safeParse(raw);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ScenarioFileError(`${source}: ${issues}`);
  }
  const v = r.data;
  return Array.isArray(v) ? v : 'scenarios' in v ? v.scenarios : [v];
}

// ---- Results (what a run reports) and runs (POST/GET /v1/agents/:id/tests) ----

/**
 * `offline`: a scripted LLM or the local reply engine, simulated (or local) STT, local TTS: charged nothing.
 * `metered`: the agent's own vendor LLM (a scenario without `llm.replies`), charged at its real cost as test traffic.
 */
export const TestMode = z.enum(['offline', 'metered']);
export type TestMode = z.infer<typeof TestMode>;

/** One expectation as checked: why it failed, or what was observed when it held. */
export const Check = z.object({
  /** The expectation as written, e.g. `turns[0].expect.replyMatches (?i)saturday`. */
  expectation: z.string(),
  passed: z.boolean(),
  reason: z.string(),
});
export type Check = z.infer<typeof Check>;

export const TurnResult = z.object({
  index: z.number().int(),
  /** What the caller said (the scenario's words, or an audio turn's transcript). */
  said: z.string(),
  /** What the platform heard (its STT's finals in this turn). */
  heard: z.string(),
  /** What the agent answered in this turn (of a reply the caller interrupted: what was said before it). */
  reply: z.string(),
  /** The whole reply, when the caller interrupted it (`reply` is what was said before the interruption). */
  fullReply: z.string().optional(),
  /** Caller's last word sent → agent's first audio received, as the caller experiences it. */
  latencyMs: z.number().nullable(),
  /** The agent started speaking before the caller had finished the turn (over a mid-sentence pause). */
  cutIn: z.boolean(),
  /** Backchannels the caller said over the agent's reply in this turn, and how many of them interrupted it. */
  backchannels: z.number().int().default(0),
  backchannelInterruptions: z.number().int().default(0),
  checks: z.array(Check),
});
export type TurnResult = z.infer<typeof TurnResult>;

/** One backchannel the caller said over the agent (impairments.backchannels), and what the platform made of it. */
export const BackchannelResult = z.object({
  /** The caller's turn whose reply it was said over; null for the greeting. */
  turn: z.number().int().nullable(),
  word: z.string(),
  /** When the caller began saying it, ms from the call's start. */
  atMs: z.number(),
  /** The agent stopped talking for it (a barge-in: the platform cleared the caller's playback). */
  interrupted: z.boolean(),
  /** The platform recorded it as a caller turn. */
  tookTurn: z.boolean(),
});
export type BackchannelResult = z.infer<typeof BackchannelResult>;

/** One recorded turn with its latency waterfall, as the call page shows it (the session trace's turn). */
export const WaterfallTurn = SessionTurn;
export type WaterfallTurn = z.infer<typeof WaterfallTurn>;

export const ScenarioResult = z.object({
  name: z.string(),
  /** The scenario's source: a file name (CLI), or `request` with its index (REST). */
  file: z.string(),
  passed: z.boolean(),
  transport: z.string(),
  /** Which STT and LLM answered: a scripted or simulated vendor is labelled as such. */
  stt: z.string(),
  llm: z.string(),
  /** Whether this scenario's call was offline (free) or on the agent's own vendor LLM (metered, test traffic). */
  mode: TestMode.default('offline'),
  sessionId: z.string().nullable(),
  /** The session's end reason (a SessionEndReason; runs stored before typed reasons keep their old text). */
  endReason: z.string().nullable(),
  /** Both sides in order, as the platform recorded them. */
  transcript: z.array(z.object({ speaker: z.string(), text: z.string() })),
  turns: z.array(TurnResult),
  checks: z.array(Check),
  /** Credits the developer's usage grew by during the scenario (null when usage could not be read). */
  costCredits: z.number().nullable(),
  lostFrames: z.number().int(),
  durationMs: z.number(),
  /** Set when the scenario could not run to the end (no greeting, a timeout, an unsupported option). */
  error: z.string().nullable(),
  /** The call's stereo recording (caller and agent legs), on the platform's authorised recordings route. */
  recordingUrl: z.string().nullable().default(null),
  /** Each recorded turn's latency waterfall (the call page's). */
  waterfall: z.array(WaterfallTurn).default([]),
  /** Replies after which the caller went on within 500 ms of the agent starting. */
  suspectedCutIns: z.number().int().default(0),
  /** Every backchannel the caller said, in order (impairments.backchannels). */
  backchannels: z.array(BackchannelResult).default([]),
  /**
   * Why the call went wrong, naming the side: "the simulated STT heard no speech" (the test's simulator, not the
   * agent) or "the agent heard the caller and did not reply"; a call with no caller turn always has one ("no caller
   * speech detected; line noise floor −31 dBFS …"). Empty when every turn the caller said was answered.
   */
  rootCause: z.array(z.string()).default([]),
});
export type ScenarioResult = z.infer<typeof ScenarioResult>;

export const TEST_RUN_STATUSES = ['queued', 'running', 'passed', 'failed', 'error'] as const;
export const TestRunStatus = z.enum(TEST_RUN_STATUSES);
export type TestRunStatus = z.infer<typeof TestRunStatus>;

/** POST /v1/agents/:id/tests: scenario objects, or the text of a scenario file (YAML or JSON). */
export const CreateTestRunBody = z
  .object({
    scenarios: z.union([z.array(Scenario).min(1).max(100), z.string().min(1).max(1_000_000)]),
    /** The agent configuration version to run (agent versions); the current one when absent. */
    version: z.number().int().min(1).optional(),
    /** Where to send `agent_test.completed` when the run ends (Standard Webhooks, signed). */
    webhookUrl: z.string().url().max(2000).optional(),
  })
  .strict();
export type CreateTestRunBody = z.infer<typeof CreateTestRunBody>;

export const TestRun = z.object({
  id: z.string(),
  agentId: z.string(),
  status: TestRunStatus,
  /** Scenarios finished so far, of all of them. */
  progress: z.object({ done: z.number().int(), total: z.number().int() }),
  passed: z.number().int(),
  failed: z.number().int(),
  /**
   * `offline`: every scenario runs on a scripted LLM or the agent's local reply engine, at no cost; `metered`: some
   * run on the agent's own vendor LLM, at real cost (each result's `mode` says which).
   */
  mode: TestMode,
  /** The agent version asked for; absent for the agent as it is. */
  version: z.number().int().optional(),
  /** Why the run could not run (the scenarios' own failures are in results); absent otherwise. */
  error: z.string().optional(),
  createdAt: z.string(),
  /** Absent until the run starts / ends. */
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
});
export type TestRun = z.infer<typeof TestRun>;

/**
 * A scenario's result as the API shows it: the runner's record (ScenarioResult, which the CLI and the stored run
 * keep as they are) with its unset strings absent rather than null, as everywhere in the API (issue 23).
 */
export const ScenarioResultView = ScenarioResult.extend({
  sessionId: z.string().optional(),
  endReason: z.string().optional(),
  error: z.string().optional(),
  recordingUrl: z.string().optional(),
});
export type ScenarioResultView = z.infer<typeof ScenarioResultView>;

export const TestRunDetail = TestRun.extend({
  scenarios: z.array(z.object({ name: z.string() })),
  /** One per finished scenario, in the scenarios' order (null for one not finished yet). */
  results: z.array(ScenarioResultView.nullable()),
});
export type TestRunDetail = z.infer<typeof TestRunDetail>;

export const AgentTestParams = z.object({ id: z.string().min(1).max(60) });
export const TestRunParams = z.object({ runId: z.string().min(1).max(60) });
