import { useEffect, useState } from 'preact/hooks';
import { request } from '../api.ts';
import type { Page, VideoJob } from '../types.ts';
import { ErrorBox, fmtDate, Loading, PageHeader, useAsync, THead } from '../ui.tsx';

export function VideoPage() {
  const list = useAsync(() => request<Page<VideoJob>>('/video/jobs', { query: { limit: 50 } }));
  const [playing, setPlaying] = useState<string | null>(null);
  const running = list.data?.data.some((j) => j.status === 'pending' || j.status === 'processing');
  // Jobs in flight: refresh their progress every few seconds while the page is open.
  useEffect(() => {
    if (!running) return;
    const t = setInterval(list.reload, 3000);
    return () => clearInterval(t);
  }, [running, list.reload]);
  const job = list.data?.data.find((j) => j.id === playing);
  return (
    <section>
      <PageHeader title="Video jobs" />
      <p>Jobs started through POST /v1/video/*; finished outputs play here.</p>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading what="video jobs" /> : null}
      {list.data?.data.length === 0 ? <p class="muted">No video jobs yet.</p> : null}
      {list.data?.data.length ? (
        <table>
          <THead cols={['Job', 'Type', 'Engine', 'Status', 'Progress', 'Created', '']} />
          <tbody>
            {list.data.data.map((j) => (
              <tr key={j.id}>
                <th scope="row">
                  <code>{j.id}</code>
                </th>
                <td>{j.type}</td>
                <td>{j.provider}</td>
                <td>
                  <span class={`badge ${j.status}`}>{j.status}</span>
                  {j.error ? <div class="bad">{j.error.message}</div> : null}
                </td>
                <td>
                  <progress max={1} value={j.progress} aria-label={`Progress of ${j.id}`} />{' '}
                  {Math.round(j.progress * 100)}%
                </td>
                <td>{fmtDate(j.created_at)}</td>
                <td>
                  {j.status === 'completed' && j.type !== 'analyze' ? (
                    <button type="button" onClick={() => setPlaying(j.id)}>
                      Play
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {job ? (
        <div class="card">
          <h2>Output of {job.id}</h2>
          {/* Same-origin output route: the CSP's media-src is 'self', so presigned storage URLs cannot play here. */}
          <video class="player" controls src={`/portal/api/video/jobs/${encodeURIComponent(job.id)}/output`} />
          {job.result ? (
            <p class="muted">
              {job.result.width}×{job.result.height}, {job.result.duration_seconds} s
            </p>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
