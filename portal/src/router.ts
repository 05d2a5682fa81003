import { useEffect, useState } from 'preact/hooks';

/** A History-API router for the portal's handful of routes; paths are relative to /portal. */
export const BASE = '/portal';

const listeners = new Set<() => void>();

export function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return p === '' ? '/' : p;
}

export function navigate(to: string, replace = false): void {
  const url = BASE + (to === '/' ? '/' : to);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const l of listeners) l();
  // A new page: move focus to its heading so screen readers announce it (see Layout).
  queueMicrotask(() => document.querySelector<HTMLElement>('main h1')?.focus());
}

addEventListener('popstate', () => {
  for (const l of listeners) l();
});

/** The current path and search, re-rendering on navigation. */
export function useRoute(): { path: string; search: URLSearchParams } {
  const [, tick] = useState(0);
  useEffect(() => {
    const l = () => tick((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return { path: currentPath(), search: new URLSearchParams(location.search) };
}

/** Matches `/agents/:id` style patterns; returns the params or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split('/').filter(Boolean);
  const b = path.split('/').filter(Boolean);
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const seg = a[i]!;
    if (seg.startsWith(':')) params[seg.slice(1)] = decodeURIComponent(b[i]!);
    else if (seg !== b[i]) return null;
  }
  return params;
}

/** Click handler for in-app links: plain left clicks navigate without a reload. */
export function linkClick(e: MouseEvent): void {
  const a = (e.currentTarget as HTMLAnchorElement | null) ?? null;
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const href = a.getAttribute('href') ?? '';
  if (!href.startsWith(BASE)) return;
  e.preventDefault();
  navigate(href.slice(BASE.length) || '/');
}
