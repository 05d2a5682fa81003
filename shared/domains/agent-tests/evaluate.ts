import { compilePattern, type Scenario } from '../../contracts/agent-tests.ts';
import type { SessionEndReason } from '../../contracts/sessions.ts';
import { backchannelResults, ignoresBackchannelsCheck, type SaidBackchannel } from './backchannels.ts';
import { turnText } from './caller-speech.ts';
import type { Check, ScenarioResult, TurnResult } from './results.ts';

/** What the caller measured during the call, per scenario turn. */
export interface Observed {
  /** Wall clock (Date.now()) when the caller started each turn. */
  turnStartsWall: number[];
  latencies: (number | null)[];
  cutIns: boolean[];
  /** Backchannels the caller said over the agent (impairments.backchannels). */
  backchannels?: SaidBackchannel[];
}

interface Detail {
  startedAt: string | null;
  endReason: string | null;
  /** `fullText`: an interrupted reply's whole text (`text` is what was said before the interruption). */
  turns: { speaker: string; text: string; startMs: number; interrupted?: boolean; fullText?: string }[];
  toolExecutions: { name: string; ok: boolean }[];
}

const AGENT = new Set(['assistant', 'agent']);
// A direct-protocol caller's `stop` is a caller hang-up too.
const ENDED: Record<string, readonly SessionEndReason[]> = {
  caller: ['caller-hangup'],
  agent: ['agent-ended'],
};

const q = (s: string) => JSON.stringify(s);
const EXCERPT = 120;
const clip = (s: string) => (s.length > EXCERPT ? `${s.slice(0, EXCERPT - 3)}…` : s);

/** At most EXCERPT characters of `text` centred on [at, at + len), with … where it was cut: the match stays in view. */
export function excerptAround(text: string, at: number, len: number): string {
  if (text.length <= EXCERPT) return text;
  const room = Math.max(0, EXCERPT - 2 - len);
  let from = Math.max(0, at - Math.floor(room / 2));
  const to = Math.min(text.length, from + Math.max(len, EXCERPT - 2));
  from = Math.max(0, Math.min(from, to - (EXCERPT - 2)));
  return `${from > 0 ? '…' : ''}${text.slice(from, to)}${to < text.length ? '…' : ''}`;
}

/** What the agent said in a turn: the words heard, and the whole reply when the caller interrupted it. */
export interface Reply {
  text: string;
  full?: string;
}

/** "the agent said …" — and, for a reply the caller cut, what it was going to say. */
function saidText(r: Reply, shown: string): string {
  if (r.full === undefined) return `the agent said ${q(shown)}`;
  const whole = `its whole reply was ${q(clip(r.full))}`;
  return r.text.trim()
    ? `the agent said ${q(shown)} before it was interrupted (${whole})`
    : `the agent was interrupted before it said anything (${whole})`;
}

function matches(expectation: string, pattern: string, reply: Reply, want: boolean): Check {
  const m = compilePattern(pattern).exec(reply.text);
  if (want)
    return m
      ? { expectation, passed: true, reason: `matched ${q(m[0])}` }
      : { expectation, passed: false, reason: `${saidText(reply, clip(reply.text))}, which does not match ${pattern}` };
  if (!m) return { expectation, passed: true, reason: `never matched` };
  const around = q(excerptAround(reply.text, m.index, m[0].length));
  const cut = reply.full === undefined ? '' : ` before it was interrupted (its whole reply was ${q(clip(reply.full))})`;
  return {
    expectation,
    passed: false,
    reason: `the agent said ${q(m[0])} in ${around}${cut}, which matches ${pattern}`,
  };
}

/** Checks every expectation of the scenario against what the caller measured and what the platform recorded. */
export function evaluate(
  scenario: Scenario,
  obs: Observed,
  detail: Detail | null,
  run: Pick<ScenarioResult, 'costCredits' | 'endReason' | 'error'>,
): Pick<ScenarioResult, 'turns' | 'checks' | 'backchannels'> {
  const t0 = detail?.startedAt ? Date.parse(detail.startedAt) : 0;
  // Each recorded turn belongs to the scenario turn the caller was in when it started (the greeting to none).
  const owner = (startMs: number) => {
    const at = t0 + startMs;
    let k = -1;
    obs.turnStartsWall.forEach((w, i) => {
      if (at >= w - 50) k = i;
    });
    return k;
  };
  const recorded = (detail?.turns ?? []).map((t) => ({ ...t, k: owner(t.startMs) }));
  const said = obs.backchannels ?? [];
  const backchannels = backchannelResults(
    said,
    t0 || (said[0]?.startWall ?? 0),
    recorded.filter((t) => !AGENT.has(t.speaker)).map((t) => t0 + t.startMs),
  );
  const turns: TurnResult[] = scenario.turns.map((turn, k) => {
    const replies = recorded.filter((t) => t.k === k && AGENT.has(t.speaker));
    const reply = replies.map((t) => t.text).join(' ');
    const cut = replies.some((t) => t.interrupted && t.fullText !== undefined);
    const said: Reply = cut
      ? { text: reply, full: replies.map((t) => t.fullText ?? t.text).join(' ') }
      : { text: reply };
    const heard = recorded
      .filter((t) => t.k === k && !AGENT.has(t.speaker))
      .map((t) => t.text)
      .join(' ');
    const latencyMs = obs.latencies[k] ?? null;
    const cutIn = obs.cutIns[k] ?? false;
    const checks: Check[] = [];
    const e = turn.expect;
    const at = `turns[${k}].expect`;
    const ran = k < obs.latencies.length;
    if (e?.replyMatches) checks.push(matches(`${at}.replyMatches ${e.replyMatches}`, e.replyMatches, said, true));
    if (e?.replyNeverMatches)
      checks.push(matches(`${at}.replyNeverMatches ${e.replyNeverMatches}`, e.replyNeverMatches, said, false));
    if (e?.noCutIn)
      checks.push({
        expectation: `${at}.noCutIn`,
        passed: ran && !cutIn,
        reason: !ran
          ? 'the turn did not run'
          : cutIn
            ? 'the agent started speaking before the caller had finished (over a mid-sentence pause)'
            : 'the agent waited for the caller to finish',
      });
    if (e?.maxLatencyMs !== undefined)
      checks.push({
        expectation: `${at}.maxLatencyMs ${e.maxLatencyMs}`,
        passed: latencyMs !== null && latencyMs <= e.maxLatencyMs,
        reason:
          latencyMs === null
            ? 'no reply was heard after the caller finished'
            : `the first reply audio came ${latencyMs} ms after the caller's last word`,
      });
    const over = backchannels.filter((b) => b.turn === k);
    return {
      index: k,
      said: turnText(turn),
      heard,
      reply,
      ...(said.full !== undefined ? { fullReply: said.full } : {}),
      latencyMs,
      cutIn,
      backchannels: over.length,
      backchannelInterruptions: over.filter((b) => b.interrupted || b.tookTurn).length,
      checks,
    };
  });

  const checks: Check[] = [];
  const x = scenario.expect;
  const agentText = recorded.filter((t) => AGENT.has(t.speaker)).map((t) => t.text);
  if (x?.replyNeverMatches) {
    const never = compilePattern(x.replyNeverMatches);
    const bad = agentText.find((t) => never.test(t));
    checks.push(
      matches(`expect.replyNeverMatches ${x.replyNeverMatches}`, x.replyNeverMatches, { text: bad ?? '' }, false),
    );
  }
  if (x?.replyMatches) {
    const want = compilePattern(x.replyMatches);
    const good = agentText.find((t) => want.test(t));
    checks.push(
      matches(`expect.replyMatches ${x.replyMatches}`, x.replyMatches, { text: good ?? agentText.join(' ') }, true),
    );
  }
  if (x?.toolCalled) {
    const calls = detail?.toolExecutions ?? [];
    const hit = calls.find((c) => c.name === x.toolCalled!.name);
    checks.push({
      expectation: `expect.toolCalled ${x.toolCalled.name}`,
      passed: Boolean(hit),
      reason: hit
        ? `called${hit.ok ? '' : ' (the tool answered with an error)'}`
        : calls.length
          ? `not called; the agent called ${calls.map((c) => c.name).join(', ')}`
          : 'not called; the agent called no tool',
    });
  }
  if (x?.endedBy)
    checks.push({
      expectation: `expect.endedBy ${x.endedBy}`,
      passed: ENDED[x.endedBy]!.some((r) => r === run.endReason),
      reason: `the call ended with ${run.endReason ?? 'no recorded end reason'}`,
    });
  if (x?.maxCredits !== undefined)
    checks.push({
      expectation: `expect.maxCredits ${x.maxCredits}`,
      passed: run.costCredits !== null && run.costCredits <= x.maxCredits,
      reason: run.costCredits === null ? 'usage could not be read' : `the call cost ${run.costCredits} credits`,
    });
  if (x?.ignoresBackchannels) checks.push(ignoresBackchannelsCheck(backchannels));
  if (run.error) checks.push({ expectation: 'the call ran to the end', passed: false, reason: run.error });
  return { turns, checks, backchannels };
}
