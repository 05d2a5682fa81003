import { request, v1 } from '../api.ts';
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { pivot } from '../charts/pivot.ts';
import type { DailyUsage, Usage } from '../types.ts';
import { ErrorBox, fmtNum, Link, Loading, PageHeader, useAsync } from '../ui.tsx';

type Chart = FunctionComponent<{ daily: DailyUsage }>;

/** uPlot is loaded with the overview only (its own chunk), so the other pages do not parse it. */
function useUsageChart(): Chart | null {
  const [chart, setChart] = useState<Chart | null>(null);
  useEffect(() => {
    void import('../charts/usage-chart.tsx').then((m) => setChart(() => m.UsageChart));
  }, []);
  return chart;
}

export function OverviewPage() {
  const UsageChart = useUsageChart();
  const usage = useAsync(() => v1<Usage>('/usage'));
  const daily = useAsync(() => request<DailyUsage>('/usage/daily'));
  const c = usage.data?.credits;
  const pct = c && c.limit > 0 ? Math.min(100, (c.used / c.limit) * 100) : 0;
  return (
    <section>
      <PageHeader title="Overview" />
      <ErrorBox error={usage.error} />
      {usage.loading && !usage.data ? <Loading what="usage" /> : null}
      {c ? (
        <>
          <dl class="stats">
            <div>
              <dt>Credits used</dt>
              <dd>{fmtNum(Math.round(c.used * 100) / 100)}</dd>
            </div>
            <div>
              <dt>Limit</dt>
              <dd>{fmtNum(c.limit)}</dd>
            </div>
            <div>
              <dt>Remaining</dt>
              <dd>{fmtNum(Math.round(c.remaining * 100) / 100)}</dd>
            </div>
            <div>
              <dt>Requests</dt>
              <dd>{fmtNum(usage.data?.requestCount)}</dd>
            </div>
          </dl>
          <label class="meter-label" for="credit-meter">
            {pct.toFixed(1)}% of this period's credits used
          </label>
          <meter id="credit-meter" min={0} max={c.limit || 1} value={c.used} high={(c.limit || 1) * 0.8} />
          <UsageNotes usage={usage.data!} />
        </>
      ) : null}
      <h2>Daily usage by category</h2>
      <ErrorBox error={daily.error} />
      {daily.data ? (
        <>
          <p class="muted">
            Period {daily.data.period.start.slice(0, 10)} to {daily.data.period.end.slice(0, 10)}.
          </p>
          {UsageChart ? <UsageChart daily={daily.data} /> : <div class="chart" />}
          <UsageTable daily={daily.data} />
        </>
      ) : daily.loading ? (
        <Loading what="daily usage" />
      ) : null}
      <h2>Get started</h2>
      <ol class="steps">
        <li>
          <Link href="/keys">Create an API key</Link> for your server.
        </li>
        <li>
          <Link href="/agents">Create an agent</Link> and talk to it in the browser.
        </li>
        <li>
          <Link href="/calls">Open a call</Link> to see where its latency went.
        </li>
      </ol>
    </section>
  );
}

/**
 * What the figures above hold that is easy to misread: agent-test calls (test traffic: counted in the figures, shown
 * apart here) and the local reply engine, which is free and so is never LLM spend (docs/billing.md).
 */
function UsageNotes(props: { usage: Usage }) {
  const t = props.usage.testTraffic;
  return (
    <ul class="usage-notes">
      <li data-testid="test-traffic">
        Test traffic this period: {fmtNum(t.sessions)} agent-test {t.sessions === 1 ? 'call' : 'calls'},{' '}
        {fmtNum(Math.round(t.credits * 100) / 100)} credits (included above; offline runs cost nothing).{' '}
        <Link href="/agents">Run tests from an agent's page.</Link>
      </li>
      <li class="muted">
        Replies by the local reply engine (a knowledge lookup, not a language model) are free: they count as requests,
        never as LLM credits. Spending limits per day: <Link href="/caps">Spending caps</Link>.
      </li>
    </ul>
  );
}

/** The chart's numbers as a table, for screen readers and for copying. */
function UsageTable(props: { daily: DailyUsage }) {
  const { days, categories, values } = pivot(props.daily);
  const rows = days
    .map((d, i) => ({ d, v: categories.map((_, k) => values[k]![i]!) }))
    .filter((r) => r.v.some((x) => x));
  if (!rows.length) return <p class="muted">No usage in this period yet.</p>;
  return (
    <details>
      <summary>Daily usage as a table</summary>
      <table>
        <thead>
          <tr>
            <th scope="col">Date</th>
            {categories.map((c) => (
              <th scope="col" key={c}>
                {c.toUpperCase()}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.d}>
              <th scope="row">{r.d}</th>
              {r.v.map((x, k) => (
                <td key={k}>{Math.round(x * 100) / 100}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
