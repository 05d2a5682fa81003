import type { ScenarioResult } from './results.ts';

/** What the runner knows about a finished call beyond the platform's record of it. */
export interface CallEvidence {
  /**
   * Caller lines the simulated STT began to hear (offline-vendors.ts `linesHeard`), or null when the call's STT was
   * a real recogniser (a direct session's local engine): then there is no simulator to blame.
   */
  simulatedLinesHeard: number | null;
  /** The line's tracked noise floor (dBFS; −∞ for digital silence), or null for an unimpaired line. */
  floorDbfs: number | null;
  /** The caller's speech level (dBFS over its voiced samples). */
  speechDbfs: number;
}

const AGENT = new Set(['assistant', 'agent']);
const db = (v: number) => `${v < 0 ? '−' : ''}${Math.abs(Math.round(v))} dBFS`;
const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}…` : s);

/** The line in words: its floor, and how far the caller's speech is over it. */
function lineWords(e: CallEvidence): string {
  if (e.floorDbfs === null || !Number.isFinite(e.floorDbfs)) return 'line noise floor: none (a clean line)';
  return `line noise floor ${db(e.floorDbfs)}, the caller's speech at ${db(e.speechDbfs)} (${Math.round(e.speechDbfs - e.floorDbfs)} dB over it)`;
}

/**
 * The call's root cause as the test sees it, naming the side that failed: the test's simulated STT (it heard no
 * speech: a simulator's limit, not the agent's) or the agent (it heard the caller and did not reply, or its STT took
 * no turn). A call with no caller turn always gets one ("no caller speech detected; line noise floor −31 dBFS"),
 * whatever its expectations; a turn the caller said gets one when no reply came after it.
 */
export function rootCause(
  r: Pick<ScenarioResult, 'turns' | 'transcript' | 'error'>,
  turnsRun: number,
  e: CallEvidence,
): string[] {
  const out: string[] = [];
  const sim = e.simulatedLinesHeard;
  const callerTurns = r.transcript.filter((t) => !AGENT.has(t.speaker) && t.text.trim()).length;
  if (turnsRun > 0 && callerTurns === 0) {
    const side =
      sim === null
        ? "the agent's STT heard no speech"
        : sim === 0
          ? 'the simulated STT heard no speech: the test’s simulator failed, not the agent'
          : 'the simulated STT heard the caller, but the agent took no caller turn';
    out.push(`no caller speech detected; ${lineWords(e)}: ${side}`);
  }
  for (const t of r.turns.slice(0, turnsRun)) {
    if (t.latencyMs !== null || t.cutIn || t.reply.trim()) continue;
    const at = `turns[${t.index}]`;
    if (sim !== null && sim <= t.index)
      out.push(
        `${at}: the simulated STT heard no speech (${lineWords(e)}): the test’s simulator failed, not the agent`,
      );
    else if (t.heard.trim()) out.push(`${at}: the agent heard the caller ("${clip(t.heard)}") and did not reply`);
    else if (sim !== null) out.push(`${at}: the simulated STT heard the caller, but the agent took no caller turn`);
    else out.push(`${at}: the agent's STT heard no caller turn (${lineWords(e)})`);
  }
  return out;
}
