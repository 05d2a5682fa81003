import { useState } from 'preact/hooks';
import { request } from '../api.ts';
import type { WebhookInfo } from '../types.ts';
import { CopyButton, ErrorBox, fmtDate, Loading, PageHeader, THead, useAsync } from '../ui.tsx';

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
        Video jobs notify the <code>webhook_url</code> you pass, signed with the secret of that address (Standard
        Webhooks headers <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>).
      </p>
      <ErrorBox error={info.error} />
      {info.loading && !w ? <Loading what="webhooks" /> : null}
      {w ? (
        <>
          <h2>Signing secrets</h2>
          {w.endpoints.length ? (
            <>
              <table>
                <THead cols={['Address', 'Secret', 'Since', 'State']} />
                <tbody>
                  {w.endpoints.map((e) => (
                    <tr key={e.id}>
                      <th scope="row" class="url">
                        {e.url}
                      </th>
                      <td>
                        <code class="secret">{e.signingSecret}</code>{' '}
                        {reveal ? <CopyButton text={e.signingSecret} /> : null}
                      </td>
                      <td>{fmtDate(e.createdAt)}</td>
                      <td>{e.disabled ? 'disabled' : 'active'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {!reveal ? (
                <button type="button" onClick={() => setReveal(true)}>
                  Reveal secrets
                </button>
              ) : null}
            </>
          ) : (
            <p class="muted">No secret yet: one is made for each address the first time a job names it.</p>
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
                      {d.lastError ? <div class="bad">{d.lastError}</div> : null}
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
