import type { Turn } from '../types.ts';
import { cutShortWords } from '../call-words.ts';
import { STAGES, waterfallRows } from './waterfall-rows.ts';

function niceStep(max: number): number {
  const raw = max / 5;
  const p = 10 ** Math.floor(Math.log10(Math.max(1, raw)));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
}

/** Stacked bars on one shared time axis (ms after the caller stopped speaking), one row per reply. */
export function Waterfall(props: { turns: Turn[]; bargeInTurns?: ReadonlySet<number> }) {
  const rows = waterfallRows(props.turns);
  if (!rows.length)
    return <p class="muted">No replies to speech in this call, so there is no latency to break down.</p>;
  const max = Math.max(...rows.map((r) => r.latencyMs), 1);
  const step = niceStep(max);
  const axisMax = Math.ceil(max / step) * step;
  const pct = (ms: number) => `${(ms / axisMax) * 100}%`;
  const ticks: number[] = [];
  for (let v = 0; v <= axisMax + 1e-9; v += step) ticks.push(v);
  return (
    <figure class="waterfall" aria-labelledby="wf-cap">
      <figcaption id="wf-cap">
        Reply latency per turn: time from the caller's last word to the agent's first audio, split by stage.
      </figcaption>
      <ul class="wf-legend" aria-hidden="true">
        {STAGES.map((s) => (
          <li key={s.key}>
            <span class={`swatch seg-${s.key}`} /> {s.label}
          </li>
        ))}
      </ul>
      <div class="wf-grid">
        {rows.map((r) => (
          <div class="wf-row" key={r.turn} data-turn={r.turn}>
            <div class="wf-label">
              Turn {r.turn}
              {r.interrupted ? ` (${cutShortWords(r.turn, props.bargeInTurns)})` : ''}
            </div>
            <div
              class="wf-track"
              role="img"
              aria-label={`Turn ${r.turn}: ${Math.round(r.latencyMs)} ms in total; ${r.segments
                .map((s) => `${STAGES.find((x) => x.key === s.key)!.label} ${Math.round(s.ms)} ms`)
                .join(', ')}`}
            >
              {r.segments.map((s) =>
                s.ms > 0 || s.measured ? (
                  <span
                    key={s.key}
                    class={`wf-bar seg-${s.key}`}
                    data-stage={s.key}
                    title={`${STAGES.find((x) => x.key === s.key)!.label}: ${Math.round(s.ms)} ms`}
                    style={{ left: pct(s.startMs), width: pct(s.ms) }}
                  />
                ) : null,
              )}
              {r.firstTokenMs !== null ? (
                <span
                  class="wf-tick"
                  title={`LLM first token at ${Math.round(r.firstTokenMs)} ms`}
                  style={{ left: pct(r.firstTokenMs) }}
                />
              ) : null}
            </div>
            <div class="wf-total">{Math.round(r.latencyMs)} ms</div>
          </div>
        ))}
        <div class="wf-row wf-axis" aria-hidden="true">
          <div class="wf-label" />
          <div class="wf-track">
            {ticks.map((v) => (
              <span key={v} class="wf-tickmark" style={{ left: pct(v) }}>
                {v} ms
              </span>
            ))}
          </div>
          <div class="wf-total" />
        </div>
      </div>
      <table class="sr-only">
        <caption>Latency by stage, milliseconds</caption>
        <thead>
          <tr>
            <th scope="col">Turn</th>
            {STAGES.map((s) => (
              <th scope="col" key={s.key}>
                {s.label}
              </th>
            ))}
            <th scope="col">Total</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.turn}>
              <th scope="row">{r.turn}</th>
              {r.segments.map((s) => (
                <td key={s.key}>{Math.round(s.ms)}</td>
              ))}
              <td>{Math.round(r.latencyMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
