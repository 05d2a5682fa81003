import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { DailyUsage } from '../types.ts';
import { pivot } from './pivot.ts';

export const CATEGORY_COLORS: Record<string, string> = {
  tts: '#1f6feb',
  stt: '#8250df',
  llm: '#bf3989',
  rag: '#1a7f37',
  video: '#bc4c00',
  session: '#0a7ea4',
};

/** Daily credits by category as stacked bars (uPlot draws lines/bars; stacking is the cumulative sums). */
export function UsageChart(props: { daily: DailyUsage }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const { days, categories, values } = pivot(props.daily);
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    // Stacked: series k holds the sum of categories 0..k, drawn last-to-first so each bar shows its own band.
    const stacked = values.map((_, k) => xs.map((__, i) => values.slice(0, k + 1).reduce((s, v) => s + v[i]!, 0)));
    const bars = uPlot.paths.bars!({ size: [0.7, 40] });
    const series: uPlot.Series[] = [{}];
    for (let k = categories.length - 1; k >= 0; k--) {
      const c = categories[k]!;
      series.push({
        label: c.toUpperCase(),
        stroke: CATEGORY_COLORS[c] ?? '#555',
        fill: CATEGORY_COLORS[c] ?? '#555',
        paths: bars,
        width: 0,
        points: { show: false },
        value: (_u, _v, _s, i) => (i === null ? '—' : String(Math.round((values[k]![i] ?? 0) * 100) / 100)),
      });
    }
    const data = [xs, ...stacked.slice().reverse()] as uPlot.AlignedData;
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 260,
        series,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
        axes: [{}, { label: 'credits', size: 60 }],
        legend: { live: true },
      },
      data,
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize({ width: width(), height: 260 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [props.daily]);
  return <div ref={host} class="chart" role="img" aria-label="Daily credits used, by category, for the period" />;
}
