import { backchannelTrouble } from './backchannels.ts';
import { allChecks, type ScenarioResult } from './results.ts';

const esc = (s: string) =>
  s
    .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!)
    // XML 1.0 forbids most control characters even escaped.
    .replace(/[^\t\n\r\u0020-\uffff]/g, '');

/**
 * JUnit XML as CI systems read it: one <testsuite> per scenario file, one <testcase> per scenario, a <failure> that
 * lists every failed expectation with its reason, and both sides' transcript in <system-out>.
 */
export function junitXml(agentId: string, results: ScenarioResult[]): string {
  const byFile = new Map<string, ScenarioResult[]>();
  for (const r of results) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
  const failed = (r: ScenarioResult) => !r.passed;
  const secs = (ms: number) => (ms / 1000).toFixed(3);
  const suites = [...byFile].map(([file, rs]) => {
    const cases = rs.map((r) => {
      const fails = allChecks(r).filter((c) => !c.passed);
      const failure = r.passed
        ? ''
        : `\n      <failure message="${esc(fails.map((f) => `${f.expectation}: ${f.reason}`).join('; ') || (r.error ?? 'failed'))}" type="expectation">${esc(
            fails.map((f) => `${f.expectation}\n  ${f.reason}`).join('\n'),
          )}</failure>`;
      const trouble = backchannelTrouble(r.backchannels);
      const out = [
        `${r.transport}, ${r.mode}`,
        `stt: ${r.stt}`,
        `llm: ${r.llm}`,
        `session: ${r.sessionId ?? '-'}; end: ${r.endReason ?? '-'}; cost: ${r.costCredits ?? '-'} credits; lost frames: ${r.lostFrames}`,
        ...r.turns.map(
          (t) =>
            `turn ${t.index}: latency ${t.latencyMs ?? '-'} ms${t.cutIn ? ' (cut-in)' : ''}${
              t.backchannels ? `; ${t.backchannels} backchannels, ${t.backchannelInterruptions} interrupting` : ''
            }`,
        ),
        ...(trouble ? [`backchannels: ${trouble}`] : []),
        ...r.rootCause.map((why) => `root cause: ${why}`),
        ...r.transcript.map((t) => `${t.speaker}: ${t.text}`),
      ].join('\n');
      return `    <testcase classname="${esc(`agent ${agentId}.${file}`)}" name="${esc(r.name)}" time="${secs(r.durationMs)}">${failure}
      <system-out>${esc(out)}</system-out>
    </testcase>`;
    });
    const time = rs.reduce((a, r) => a + r.durationMs, 0);
    return `  <testsuite name="${esc(file)}" tests="${rs.length}" failures="${rs.filter(failed).length}" errors="0" time="${secs(time)}">
${cases.join('\n')}
  </testsuite>`;
  });
  const total = results.length;
  const fails = results.filter(failed).length;
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="agent tests ${esc(agentId)}" tests="${total}" failures="${fails}" errors="0">
${suites.join('\n')}
</testsuites>
`;
}
