import type { DailyUsage } from '../types.ts';

/** One row per day in the period, one column per category (missing days count zero). */
export function pivot(daily: DailyUsage): { days: string[]; categories: string[]; values: number[][] } {
  const days: string[] = [];
  const start = new Date(`${daily.period.start.slice(0, 10)}T00:00:00Z`);
  const end = new Date(`${daily.period.end.slice(0, 10)}T00:00:00Z`);
  for (let d = start; d <= end && days.length < 400; d = new Date(d.getTime() + 86_400_000))
    days.push(d.toISOString().slice(0, 10));
  const categories = [...new Set(daily.data.map((r) => r.category))].sort();
  const index = new Map(days.map((d, i) => [d, i]));
  const values = categories.map(() => days.map(() => 0));
  for (const r of daily.data) {
    const i = index.get(r.date);
    const c = categories.indexOf(r.category);
    if (i !== undefined && c >= 0) values[c]![i]! += r.credits;
  }
  return { days, categories, values };
}
