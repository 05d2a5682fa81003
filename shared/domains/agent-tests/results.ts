/** What an agent-test run reports: one check per expectation, with the reason it failed (or what it saw). */
export interface Check {
  /** The expectation as written, e.g. `turns[0].expect.replyMatches "(?i)saturday"`. */
  expectation: string;
  passed: boolean;
  /** Why it failed, or what was observed when it passed. */
  reason: string;
}

export interface TurnResult {
  index: number;
  /** What the caller said (the scenario's text). */
  said: string;
  /** What the platform heard (its STT's finals in this turn). */
  heard: string;
  /** What the agent answered in this turn. */
  reply: string;
  /** Caller's last word sent → agent's first audio received, as the caller experiences it. */
  latencyMs: number | null;
  /** The agent started speaking before the caller had finished the turn (over a mid-sentence pause). */
  cutIn: boolean;
  checks: Check[];
}

export interface ScenarioResult {
  name: string;
  file: string;
  passed: boolean;
  transport: string;
  /** Which STT and LLM answered: a scripted or simulated vendor is labelled as such. */
  stt: string;
  llm: string;
  sessionId: string | null;
  endReason: string | null;
  /** Both sides in order, as the platform recorded them. */
  transcript: { speaker: string; text: string }[];
  turns: TurnResult[];
  checks: Check[];
  /** Credits the developer's usage grew by during the scenario (null when usage could not be read). */
  costCredits: number | null;
  lostFrames: number;
  durationMs: number;
  /** Set when the scenario could not run to the end (no greeting, a timeout, an unsupported option). */
  error: string | null;
}

/** Every check of a scenario, turn checks first. */
export function allChecks(r: ScenarioResult): Check[] {
  return [...r.turns.flatMap((t) => t.checks), ...r.checks];
}
