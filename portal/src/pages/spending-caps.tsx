import { useState } from 'preact/hooks';
import { v1 } from '../api.ts';
import type { ApiKey, Page, SpendingCaps } from '../types.ts';
import { ErrorBox, Field, fieldError, fmtNum, Loading, PageHeader, THead, useAction, useAsync } from '../ui.tsx';

const left = (cap: number | null, spent: number) => (cap === null ? '—' : fmtNum(Math.max(0, cap - spent)));
const round = (n: number) => Math.round(n * 100) / 100;

/**
 * Daily spending caps (GET/PUT /v1/billing/spending-caps; docs/billing.md, "Spending caps"): one over all the
 * developer's usage and one per API key, in credits per UTC day, each with today's spend and what is left. An
 * empty box removes that cap.
 */
export function SpendingCapsPage() {
  const caps = useAsync(() => v1<SpendingCaps>('/billing/spending-caps'));
  const keys = useAsync(() => v1<Page<ApiKey>>('/keys', { query: { limit: 100 } }));
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const save = useAction(() => (caps.reload(), setEdits({}), setSaved(true)));
  const c = caps.data;
  const keyCap = (id: string) => c?.keys.find((k) => k.keyId === id);
  const value = (id: string, current: number | null | undefined) =>
    edits[id] ?? (current === null || current === undefined ? '' : String(current));
  const edit = (id: string) => (e: Event) => {
    const v = (e.currentTarget as HTMLInputElement).value;
    setEdits((s) => ({ ...s, [id]: v }));
    setSaved(false);
  };
  const toCap = (v: string) => (v.trim() === '' ? null : Number(v));
  return (
    <section>
      <PageHeader title="Spending caps" />
      <p class="muted">
        Credits a day (UTC) that usage may reach: over all your keys, and per key. At a cap, new work is refused and
        running calls say their goodbye (end reason "daily cap"); campaigns wait for the next day.
        {c ? ` Figures for ${c.day}.` : ''}
      </p>
      <ErrorBox error={caps.error ?? keys.error} />
      {caps.loading && !c ? <Loading what="the caps" /> : null}
      {c && keys.data ? (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            const body: Record<string, unknown> = {};
            if ('account' in edits) body.dailyCredits = toCap(edits.account!);
            const k = Object.entries(edits).filter(([id]) => id !== 'account');
            if (k.length) body.keys = k.map(([keyId, v]) => ({ keyId, dailyCredits: toCap(v) }));
            void save.act(async () => {
              await v1('/billing/spending-caps', { method: 'PUT', json: body });
            });
          }}
        >
          <table class="stack caps">
            <THead cols={['Applies to', 'Daily cap (credits)', 'Spent today', 'Left today']} />
            <tbody>
              <tr data-cap="account">
                <th scope="row">All usage</th>
                {/* The field's own label names the cell: a data-label would say it twice on a phone. */}
                <td>
                  <Field
                    label="Daily cap for all usage"
                    name="dailyCredits"
                    type="number"
                    min="0"
                    value={value('account', c.dailyCredits)}
                    onInput={edit('account')}
                    placeholder="no cap"
                    error={fieldError(save.error, 'dailyCredits')}
                  />
                </td>
                <td data-label="Spent today">{fmtNum(round(c.spentToday))}</td>
                <td data-label="Left today" data-testid="left">
                  {left(c.dailyCredits, c.spentToday)}
                </td>
              </tr>
              {keys.data.data.map((k) => {
                const kc = keyCap(k.id);
                return (
                  <tr key={k.id} data-cap={k.id}>
                    <th scope="row">
                      Key {k.name} <code>{k.prefix}…</code>
                    </th>
                    <td>
                      <Field
                        label={`Daily cap for key ${k.name}`}
                        name={`key-${k.id}`}
                        type="number"
                        min="0"
                        value={value(k.id, kc?.dailyCredits)}
                        onInput={edit(k.id)}
                        placeholder="no cap"
                      />
                    </td>
                    <td data-label="Spent today">{kc ? fmtNum(round(kc.spentToday)) : '—'}</td>
                    <td data-label="Left today" data-testid="left">
                      {kc ? left(kc.dailyCredits, kc.spentToday) : '—'}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {save.error && !fieldError(save.error, 'dailyCredits') ? <ErrorBox error={save.error} /> : null}
          <p class="row">
            <button type="submit" class="primary" disabled={save.busy || !Object.keys(edits).length}>
              Save caps
            </button>
            {saved ? (
              <span role="status" class="ok">
                Saved.
              </span>
            ) : null}
          </p>
        </form>
      ) : null}
    </section>
  );
}
