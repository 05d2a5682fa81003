import { useState } from 'preact/hooks';
import { request } from '../api.ts';
import type { WebhookInfo } from '../types.ts';
import { CopyButton, ErrorBox, fmtDate, Loading, PageHeader, useAsync, THead } from '../ui.tsx';

export function WebhooksPage() {
  const [reveal, setReveal] = useState(false);
  const info = useAsync(
    () => request<WebhookInfo>('/webhooks', { query: { reveal: reveal ? 1 : undefined } }),
    [reveal],
  );
  const w = info.data;
  return (
    <section>
      <PageHeader title="Webhooks" />
      <p>
        Video jobs notify the <code>webhook_url</code> you pass, signed with your secret (Standard Webhooks:
        <code> webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>).
      </p>
      <ErrorBox error={info.error} />
      {info.loading && !w ? <Loading what="webhooks" /> : null}
      {w ? (
        <>
          <h2>Signing secret</h2>
          {w.signingSecret ? (
            <div class="row">
              <code class="secret">{w.signingSecret}</code>
              {reveal ? (
                <CopyButton text={w.signingSecret} />
              ) : (
                <button type="button" onClick={() => setReveal(true)}>
                  Reveal
                </button>
              )}
            </div>
          ) : (
            <p class="muted">No secret yet: one is created with your first webhook.</p>
          )}
          <h2>Recent deliveries</h2>
          {w.deliveries.length ? (
            <table>
              <THead cols={['Event', 'URL', 'Outcome', 'Attempts', 'Last status', 'Sent']} />
              <tbody>
                {w.deliveries.map((d) => (
                  <tr key={d.id}>
                    <th scope="row">{d.event}</th>
                    <td class="url">{d.url}</td>
                    <td>
                      <span class={`badge ${d.status}`}>{d.status}</span>
                    </td>
                    <td>{d.attempts}</td>
                    <td>{d.lastStatusCode ?? '—'}</td>
                    <td>{fmtDate(d.deliveredAt ?? d.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="muted">No deliveries yet.</p>
          )}
        </>
      ) : null}
    </section>
  );
}
