import type { CallReplay } from '../../../contracts/call-replay.ts';

const ms = (v: number | undefined) => (v === undefined ? '—' : `${v} ms`);
const flags = (interrupted: boolean, cutIn: boolean) =>
  [interrupted ? 'interrupted' : '', cutIn ? 'cut in?' : ''].filter(Boolean).join(', ') || 'clean';

/** A replay as text for a terminal: one block per turn, what changed marked, the summary last. */
export function describeReplay(r: CallReplay): string {
  const lines = [
    `Replay ${r.id} of call ${r.callId} (agent ${r.agentId}, version ${r.agentVersion.then ?? '?'} then, ${r.agentVersion.now} now): ${r.status}`,
    `  STT: ${r.stt ?? '—'} · replies: ${r.llm ?? '—'}`,
  ];
  for (const t of r.turns) {
    const head = t.index === 0 ? 'greeting' : `turn ${t.index}`;
    lines.push('', `${t.reply.changed ? '≠' : '='} ${head}${t.skipped ? ` (not replayed: ${t.skipped})` : ''}`);
    if (t.index > 0) lines.push(`    caller then: ${t.caller.then ?? '—'}`, `    caller now:  ${t.caller.now ?? '—'}`);
    lines.push(`    agent then:  ${t.reply.then ?? '(nothing)'}`, `    agent now:   ${t.reply.now ?? '(nothing)'}`);
    if (t.index > 0)
      lines.push(
        `    latency ${ms(t.latencyMs.then)} → ${ms(t.latencyMs.now)} · ${flags(t.interrupted.then, t.cutIn.then)} → ${flags(t.interrupted.now, t.cutIn.now)}`,
      );
  }
  const s = r.summary;
  if (s)
    lines.push(
      '',
      `${s.changedReplies} of ${s.turns} replies changed · average latency ${ms(s.avgLatencyMs.then)} → ${ms(s.avgLatencyMs.now)} · interruptions ${s.interruptions.then} → ${s.interruptions.now} · suspected cut-ins ${s.cutIns.then} → ${s.cutIns.now}`,
    );
  if (r.error) lines.push('', `error: ${r.error}`);
  return lines.join('\n');
}
