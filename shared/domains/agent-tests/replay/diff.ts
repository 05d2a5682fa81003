import type { ReplaySummary, ReplayTurn } from '../../../contracts/call-replay.ts';
import type { ReplayPlan } from './plan.ts';
import { isCallerTurn, type RecordedTurn } from './recorded-call.ts';

/** One caller turn and the agent's answer to it (n = 0: the greeting, before the caller said anything). */
interface Exchange {
  caller: string | null;
  reply: string | null;
  latencyMs: number | null;
  interrupted: boolean;
  cutIn: boolean;
}

/**
 * Groups a trace into exchanges: each caller turn (numbered by `assign`, null = not one of the replayed turns)
 * with every agent turn after it until the next caller turn. Two caller turns given one number (the replay's STT
 * split one turn in two) are one exchange.
 */
function exchanges(turns: RecordedTurn[], assign: (user: RecordedTurn, ordinal: number) => number | null) {
  const out = new Map<number, Exchange>();
  let cur: Exchange | null = null;
  let ordinal = 0;
  const at = (n: number) => {
    let e = out.get(n);
    if (!e) out.set(n, (e = { caller: null, reply: null, latencyMs: null, interrupted: false, cutIn: false }));
    return e;
  };
  cur = at(0);
  for (const t of turns) {
    if (t.speaker === 'user') {
      if (!isCallerTurn(t)) continue;
      const n = assign(t, ++ordinal);
      if (n === null) continue;
      cur = at(n);
      cur.caller = cur.caller ? `${cur.caller} ${t.text}` : t.text;
      continue;
    }
    if (!t.text.trim() && !t.interrupted) continue;
    if (cur.reply === null) cur.latencyMs = t.latencyMs;
    cur.reply = cur.reply ? `${cur.reply} ${t.text}` : t.text;
    cur.interrupted ||= t.interrupted;
    cur.cutIn ||= t.cutIn;
  }
  return out;
}

const norm = (s: string | null) =>
  (s ?? '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** Slack for the replay's clock: its session starts a moment after the caller connects. */
const CLOCK_SLACK_MS = 400;
/** Share of a heard caller turn's words found in a recorded one for the two to be the same utterance. */
const SAME_UTTERANCE = 0.6;

const wordsOf = (s: string | null) => norm(s).split(' ').filter(Boolean);

/** How much of `heard` (its words) the recorded utterance holds: 1 when every word is in it (a split half too). */
function containment(heard: string[], recorded: Set<string>): number {
  return heard.length ? heard.filter((w) => recorded.has(w)).length / heard.length : 0;
}

/**
 * The per-turn diff of a recorded call ("then") and its replay ("now"). Then, caller turns are numbered in order;
 * now, each caller turn the replay's platform heard belongs to the replayed turn whose audio had begun by then
 * (the audio went out at the original times), so a turn heard as two, or not at all, stays on its own row.
 */
export function replayDiff(
  then: RecordedTurn[],
  now: RecordedTurn[],
  plan: ReplayPlan,
): { turns: ReplayTurn[]; summary: ReplaySummary } {
  const before = exchanges(then, (_t, ordinal) => ordinal);
  const starts = plan.turns.map((t) => t.atMs);
  const recordedCallers = plan.turns.map((t) => ({ n: t.n, atMs: t.atMs, words: new Set(wordsOf(t.text)) }));
  let lastN = 0;
  // By the caller's utterance first: the replayed audio is the recorded one, so what the replay heard is what was
  // heard then, whatever the agent now says (a longer greeting shifts the replay's clock, not the caller's words).
  // Never back before the last row matched. Then by time: the turn whose audio had begun when it was heard.
  const after = exchanges(now, (t) => {
    const heard = wordsOf(t.text);
    let best: { n: number; score: number; off: number } | null = null;
    for (const c of recordedCallers) {
      if (c.n < lastN) continue;
      const score = containment(heard, c.words);
      const off = Math.abs(c.atMs - t.startMs);
      if (score >= SAME_UTTERANCE && (!best || score > best.score || (score === best.score && off < best.off)))
        best = { n: c.n, score, off };
    }
    let n = best?.n ?? null;
    if (n === null) {
      let k = -1;
      for (let i = 0; i < starts.length; i++) if (starts[i]! <= t.startMs + CLOCK_SLACK_MS) k = i;
      n = k < 0 ? null : plan.turns[k]!.n;
    }
    if (n !== null) lastN = Math.max(lastN, n);
    return n;
  });
  const count = Math.max(0, ...before.keys());
  const turns: ReplayTurn[] = [];
  for (let n = 0; n <= count; n++) {
    const a = before.get(n);
    const b = after.get(n);
    turns.push({
      index: n,
      caller: { then: a?.caller ?? null, now: b?.caller ?? null },
      reply: {
        then: a?.reply ?? null,
        now: b?.reply ?? null,
        changed: norm(a?.reply ?? null) !== norm(b?.reply ?? null),
      },
      latencyMs: { then: a?.latencyMs ?? null, now: b?.latencyMs ?? null },
      interrupted: { then: a?.interrupted ?? false, now: b?.interrupted ?? false },
      cutIn: { then: a?.cutIn ?? false, now: b?.cutIn ?? false },
      skipped: plan.skipped.get(n) ?? null,
    });
  }
  const avg = (xs: (number | null)[]) => {
    const v = xs.filter((x): x is number => x !== null);
    return v.length ? Math.round(v.reduce((s, x) => s + x, 0) / v.length) : null;
  };
  const replayed = turns.filter((t) => t.skipped === null);
  return {
    turns,
    summary: {
      turns: turns.length,
      changedReplies: replayed.filter((t) => t.reply.changed).length,
      avgLatencyMs: {
        then: avg(replayed.map((t) => t.latencyMs.then)),
        now: avg(replayed.map((t) => t.latencyMs.now)),
      },
      interruptions: {
        then: replayed.filter((t) => t.interrupted.then).length,
        now: replayed.filter((t) => t.interrupted.now).length,
      },
      cutIns: { then: replayed.filter((t) => t.cutIn.then).length, now: replayed.filter((t) => t.cutIn.now).length },
    },
  };
}
