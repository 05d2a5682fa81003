import type { Turn } from '../types.ts';

/** The stages of one reply, in the order they happen after the caller stops speaking. */
export const STAGES = [
  { key: 'endpoint', label: 'Endpointing wait' },
  { key: 'stt', label: 'STT' },
  { key: 'llm', label: 'LLM first token' },
  { key: 'tts', label: 'TTS first audio' },
  { key: 'overhead', label: 'Platform overhead' },
] as const;
export type StageKey = (typeof STAGES)[number]['key'];

export interface WaterfallRow {
  turn: number;
  text: string;
  latencyMs: number;
  interrupted: boolean;
  segments: Array<{ key: StageKey; startMs: number; ms: number }>;
  /** LLM first token, when it came before the first speakable sentence (the LLM bar runs to the sentence). */
  firstTokenMs: number | null;
}

/**
 * Rows for assistant turns that answered speech (latency known). The trace's overhead is computed with the LLM
 * stage measured to the first sentence handed to TTS, so the LLM bar takes latency minus the other four stages
 * (the bars then add up to the measured latency); the first-token time is marked inside it.
 */
export function waterfallRows(turns: Turn[]): WaterfallRow[] {
  const rows: WaterfallRow[] = [];
  for (const t of turns) {
    if (t.speaker !== 'assistant' || t.latencyMs === null) continue;
    const endpoint = Math.max(0, t.endpointMs ?? 0);
    const stt = Math.max(0, t.sttMs);
    const tts = Math.max(0, t.ttsMs);
    const overhead = Math.max(0, t.overheadMs ?? 0);
    const llm = Math.max(0, t.latencyMs - endpoint - stt - tts - overhead);
    const sizes: Record<StageKey, number> = { endpoint, stt, llm, tts, overhead };
    let at = 0;
    const segments = STAGES.map((s) => {
      const seg = { key: s.key, startMs: at, ms: sizes[s.key] };
      at += sizes[s.key];
      return seg;
    });
    rows.push({
      turn: t.index,
      text: t.text,
      latencyMs: t.latencyMs,
      interrupted: t.interrupted,
      segments,
      firstTokenMs: t.llmMs > 0 ? endpoint + stt + Math.min(t.llmMs, llm) : null,
    });
  }
  return rows;
}

function niceStep(max: number): number {
  const raw = max / 5;
  const p = 10 ** Math.floor(Math.log10(Math.max(1, raw)));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
}

/** Stacked bars on one shared time axis (ms after the caller stopped speaking), one row per reply. */
export function Waterfall(props: { turns: Turn[] }) {
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
              {r.interrupted ? ' (interrupted)' : ''}
            </div>
            <div
              class="wf-track"
              role="img"
              aria-label={`Turn ${r.turn}: ${Math.round(r.latencyMs)} ms in total; ${r.segments
                .map((s) => `${STAGES.find((x) => x.key === s.key)!.label} ${Math.round(s.ms)} ms`)
                .join(', ')}`}
            >
              {r.segments.map((s) =>
                s.ms > 0 ? (
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
