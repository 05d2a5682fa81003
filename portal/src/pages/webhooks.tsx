import { useState } from 'preact/hooks';
import { request } from '../api.ts';
import type { WebhookInfo, WebhookTestResult } from '../types.ts';
import {
  ConfirmButton,
  CopyButton,
  ErrorBox,
  Field,
  fieldError,
  fmtDate,
  Loading,
  PageHeader,
  THead,
  useAction,
  useAsync,
} from '../ui.tsx';

/** What the first attempt of a test event did, in words. */
function testOutcome(r: WebhookTestResult): string {
  if (r.status === 'delivered') return `Test event delivered: the endpoint answered ${r.statusCode}.`;
  const got = r.statusCode === null ? 'no answer' : `HTTP ${r.statusCode}`;
  return `Test event not delivered (${got}); it is retried on the usual schedule. See Recent deliveries.`;
}

export function WebhooksPage() {
  const [reveal, setReveal] = useState(false);
  const info = useAsync(
    () => request<WebhookInfo>('/webhooks', { query: { reveal: reveal ? 1 : undefined } }),
    [reveal],
  );
  const w = info.data;
  const [url, setUrl] = useState('');
  const [tested, setTested] = useState<Record<string, string>>({});
  const add = useAction(info.reload);
  const row = useAction(info.reload);
  return (
    <section>
      <PageHeader title="Webhooks" />
      <p>
        Video jobs, campaigns and answering-machine outcomes notify the <code>webhook_url</code> you pass, signed with
        the secret of that address (Standard Webhooks headers <code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
        <code>webhook-signature</code>). Add an address here to get its secret and send it a test event first.
      </p>
      <form
        class="inline-form"
        aria-labelledby="new-wh-h"
        onSubmit={(e) => {
          e.preventDefault();
          void add.act(async () => {
            await request('/webhooks/endpoints', { json: { url } });
            setUrl('');
          });
        }}
      >
        <h2 id="new-wh-h">Add an endpoint</h2>
        <Field
          label="Endpoint URL"
          name="url"
          type="url"
          placeholder="https://example.com/hooks/voice"
          required
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
          error={fieldError(add.error, 'url')}
        />
        <button type="submit" class="primary" disabled={add.busy}>
          Add endpoint
        </button>
      </form>
      {fieldError(add.error, 'url') ? null : <ErrorBox error={add.error} />}
      <ErrorBox error={info.error} />
      {info.loading && !w ? <Loading what="webhooks" /> : null}
      {w ? (
        <>
          <h2>Signing secrets</h2>
          {w.endpoints.length ? (
            <>
              <table>
                <THead cols={['Address', 'Secret', 'Since', 'State', '']} />
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
                      <td class="actions">
                        <button
                          type="button"
                          disabled={row.busy}
                          onClick={() =>
                            void row.act(async () => {
                              const r = await request<WebhookTestResult>(
                                `/webhooks/endpoints/${encodeURIComponent(e.id)}/test`,
                                { method: 'POST' },
                              );
                              setTested((t) => ({ ...t, [e.id]: testOutcome(r) }));
                            })
                          }
                        >
                          Send test event
                        </button>
                        <ConfirmButton
                          label="Remove"
                          confirmLabel="Remove it and its delivery log"
                          disabled={row.busy}
                          onConfirm={() =>
                            void row.act(() =>
                              request(`/webhooks/endpoints/${encodeURIComponent(e.id)}`, { method: 'DELETE' }),
                            )
                          }
                        />
                        {tested[e.id] ? (
                          <p role="status" class="test-outcome">
                            {tested[e.id]}
                          </p>
                        ) : null}
                      </td>
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
            <p class="muted">
              No endpoints yet: add one above, or one is made for each address the first time a job names it.
            </p>
          )}
          <ErrorBox error={row.error} />
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
