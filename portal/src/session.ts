import { useEffect, useState } from 'preact/hooks';
import { csrfTokenFrom, request, setCsrfToken } from './api.ts';
import type { Developer, SessionInfo } from './types.ts';

/** The signed-in developer, shared by every page; null while signed out, undefined while unknown. */
let current: Developer | null | undefined;
/** Set while the session is verified but the account is not named yet. */
export let pendingPhone: string | null = null;
const listeners = new Set<() => void>();

function set(dev: Developer | null): void {
  current = dev;
  for (const l of listeners) l();
}

export async function refreshSession(): Promise<Developer | null> {
  try {
    const check = request<SessionInfo>('/auth/session', { quiet401: true });
    csrfTokenFrom(check);
    const s = await check;
    setCsrfToken(s.csrfToken);
    // A verified phone without an account yet (reload during sign-up): the login page asks for the name.
    pendingPhone = s.status === 'needs_name' ? (s.phone ?? null) : null;
    set(s.developer ?? null);
    return s.developer ?? null;
  } catch {
    setCsrfToken('');
    set(null);
    return null;
  }
}

export function signedOut(): void {
  setCsrfToken('');
  set(null);
}

export function useDeveloper(): Developer | null | undefined {
  const [, tick] = useState(0);
  useEffect(() => {
    const l = () => tick((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return current;
}
