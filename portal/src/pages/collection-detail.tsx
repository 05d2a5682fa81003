import { useState } from 'preact/hooks';
import { request, v1 } from '../api.ts';
import { navigate } from '../router.ts';
import type { Collection, CollectionDocument, Page, SearchHit } from '../types.ts';
import {
  ConfirmButton,
  ErrorBox,
  Field,
  fieldError,
  fmtDate,
  fmtNum,
  Link,
  Loading,
  PageHeader,
  THead,
  useAction,
  useAsync,
} from '../ui.tsx';

interface Ingested {
  documentId: string;
  chunksCreated: number;
  /** `entries`: one chunk per Markdown heading or Q&A question; `size`: by length. */
  split?: 'entries' | 'size';
  tokensUsed: number;
}

/** Text files are read in the browser and sent as `content` (the ingest route takes text up to 1 MB). */
const MAX_BYTES = 1_000_000;

export function CollectionDetailPage(props: { id: string }) {
  const enc = encodeURIComponent(props.id);
  const col = useAsync(() => v1<Collection>(`/collections/${enc}`));
  const docs = useAsync(() =>
    request<Page<CollectionDocument>>(`/collections/${enc}/documents`, { query: { limit: 100 } }),
  );
  const remove = useAction(docs.reload);
  const [added, setAdded] = useState<Ingested & { label: string }>();
  const [ingestError, setIngestError] = useState<unknown>(null);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [hits, setHits] = useState<SearchHit[] | null>(null);
  const [searchError, setSearchError] = useState<unknown>(null);
  const [query, setQuery] = useState('');
  const [threshold, setThreshold] = useState('0.3');

  async function ingest(content: string, label: string) {
    setBusy(true);
    setIngestError(null);
    try {
      const r = await v1<Ingested>(`/collections/${enc}/ingest`, {
        json: { content, contentType: 'text', metadata: { source: label } },
      });
      setAdded({ ...r, label });
      setText('');
      docs.reload();
    } catch (e) {
      setIngestError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section>
      <PageHeader title={col.data ? `Collection: ${col.data.name}` : 'Collection'}>
        <Link href="/collections">All collections</Link>
      </PageHeader>
      <ErrorBox error={col.error} />
      {col.loading && !col.data ? <Loading what="the collection" /> : null}
      {col.data ? (
        <>
          <p class="muted">
            Id <code>{col.data.id}</code> · created {fmtDate(col.data.createdAt)}
            {col.data.description ? ` · ${col.data.description}` : ''}
          </p>
          <div class="two-col">
            <div class="card">
              <h2>Add content</h2>
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  if (text.trim()) void ingest(text, 'pasted text');
                }}
              >
                <Field
                  label="Text"
                  name="content"
                  as="textarea"
                  rows={6}
                  value={text}
                  onInput={(e) => setText(e.currentTarget.value)}
                  error={fieldError(ingestError, 'content')}
                />
                <button type="submit" class="primary" disabled={busy || !text.trim()}>
                  Add text
                </button>
              </form>
              <Field
                label="Or upload a text file (.txt, .md, .csv, .json)"
                name="file"
                type="file"
                accept=".txt,.md,.csv,.json,text/*"
                disabled={busy}
                onChange={(e) => {
                  const file = e.currentTarget.files?.[0];
                  e.currentTarget.value = '';
                  if (!file) return;
                  if (file.size > MAX_BYTES) {
                    setIngestError(new Error(`${file.name} is over 1 MB; split it first.`));
                    return;
                  }
                  void file.text().then((t) => ingest(t, file.name));
                }}
              />
              <ErrorBox error={fieldError(ingestError, 'content') ? null : ingestError} />
              {added ? (
                <p role="status" class="ok">
                  Added {added.label}: {added.chunksCreated} {added.chunksCreated === 1 ? 'chunk' : 'chunks'}
                  {added.split === 'entries' ? ', one per heading or question' : ''} ({added.tokensUsed} tokens).
                </p>
              ) : null}
            </div>
            <div class="card">
              <h2>Search</h2>
              <form
                class="row"
                onSubmit={(e) => {
                  e.preventDefault();
                  setSearchError(null);
                  v1<{ results: SearchHit[] }>(`/collections/${enc}/search`, {
                    json: { query, limit: 10, threshold: Number(threshold) },
                  }).then((r) => setHits(r.results), setSearchError);
                }}
              >
                <Field
                  label="Query"
                  name="query"
                  value={query}
                  onInput={(e) => setQuery(e.currentTarget.value)}
                  required
                />
                <Field
                  label="Minimum score"
                  name="threshold"
                  type="number"
                  min="0"
                  max="1"
                  step="0.05"
                  value={threshold}
                  onInput={(e) => setThreshold(e.currentTarget.value)}
                  error={fieldError(searchError, 'threshold')}
                />
                <button type="submit">Search</button>
              </form>
              <ErrorBox error={fieldError(searchError, 'threshold') ? null : searchError} />
              {hits ? (
                hits.length ? (
                  <ol class="hits">
                    {hits.map((h) => (
                      <li key={`${h.documentId}:${h.chunkIndex}`}>
                        <span class="score" title="Similarity, 0 to 1">
                          {h.score.toFixed(3)}
                        </span>{' '}
                        {h.content.length > 300 ? `${h.content.slice(0, 300)}…` : h.content}
                      </li>
                    ))}
                  </ol>
                ) : (
                  <p class="muted">No chunk scored above {threshold}.</p>
                )
              ) : null}
            </div>
          </div>
          <DocumentList docs={docs} remove={remove} enc={enc} />
          <h3>Danger zone</h3>
          <ConfirmButton
            label="Delete collection"
            confirmLabel="Delete it and all its documents"
            onConfirm={() => void v1(`/collections/${enc}`, { method: 'DELETE' }).then(() => navigate('/collections'))}
          />
        </>
      ) : null}
    </section>
  );
}

/** The documents in the collection, with where each came from and a way to remove one. */
function DocumentList(props: {
  docs: { data?: Page<CollectionDocument>; error?: unknown; loading: boolean };
  remove: ReturnType<typeof useAction>;
  enc: string;
}) {
  const { docs, remove, enc } = props;
  const list = docs.data?.data;
  return (
    <div class="card">
      <h2>Documents</h2>
      <ErrorBox error={docs.error} />
      {docs.loading && !list ? <Loading what="documents" /> : null}
      {list && !list.length ? (
        <p class="muted">
          No documents yet: add text or a file above, and agents using this collection can answer from it.
        </p>
      ) : null}
      {list?.length ? (
        <div class="table-wrap">
          <table class="documents" aria-label="Documents">
            <THead cols={['Source', 'Kind', 'Characters', 'Chunks', 'Split by', 'Added', '']} />
            <tbody>
              {list.map((d) => (
                <tr key={d.id}>
                  <th scope="row">{d.source ?? <code>{d.id}</code>}</th>
                  <td>{d.contentType}</td>
                  <td>{fmtNum(d.chars)}</td>
                  <td>{d.chunks}</td>
                  <td title={d.split === 'entries' ? 'One chunk per Markdown heading or Q&A question' : undefined}>
                    {d.split === 'entries' ? 'heading / question' : 'size'}
                  </td>
                  <td>{fmtDate(d.createdAt)}</td>
                  <td>
                    <ConfirmButton
                      label="Delete"
                      confirmLabel="Delete this document"
                      disabled={remove.busy}
                      onConfirm={() =>
                        void remove.act(() =>
                          v1(`/collections/${enc}/documents/${encodeURIComponent(d.id)}`, { method: 'DELETE' }),
                        )
                      }
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {docs.data?.hasMore ? <p class="muted">Showing the newest 100 documents.</p> : null}
      <ErrorBox error={remove.error} />
    </div>
  );
}
