/** The portal's HTTP client: session cookie + CSRF header on writes, the platform's one error envelope. */

export const API_BASE = '/portal/api';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    /** The request field the error is about (inline form errors hang off it). */
    readonly param: string | null,
    readonly requestId: string | null,
  ) {
    super(message);
  }
}

let csrfToken = '';
/** Called with the token from GET /auth/session (or verify/signup); sent on every state-changing request. */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/**
 * The session check in flight, if any. Pages render (and a user can click) while it runs; a write waits for it
 * so that it carries the token instead of failing the CSRF check.
 */
let csrfPending: Promise<unknown> | null = null;
export function csrfTokenFrom(check: Promise<unknown>): void {
  csrfPending = check;
  void check.finally(() => {
    if (csrfPending === check) csrfPending = null;
  });
}

let onUnauthorized: () => void = () => {};
/** Where a 401 portal_session_required sends the app (the login page). */
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  json?: unknown;
  query?: Record<string, string | number | undefined | null>;
  /** Do not redirect to the login page on 401 (the login flow itself). */
  quiet401?: boolean;
}

export async function request<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const method = opts.method ?? (opts.json === undefined ? 'GET' : 'POST');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET' && !csrfToken && csrfPending) await csrfPending.catch(() => {});
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  let url = API_BASE + path;
  if (opts.query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
    const s = q.toString();
    if (s) url += (url.includes('?') ? '&' : '?') + s;
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      credentials: 'same-origin',
      body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
    });
  } catch {
    throw new ApiError(0, 'network_error', 'network_error', 'The platform could not be reached.', null, null);
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const e = (body as { error?: Partial<Record<string, string | null>> } | null)?.error ?? {};
    const err = new ApiError(
      res.status,
      e.type ?? 'api_error',
      e.code ?? `http_${res.status}`,
      e.message ?? `Request failed (${res.status}).`,
      e.param ?? null,
      e.requestId ?? res.headers.get('x-request-id'),
    );
    if (res.status === 401 && !opts.quiet401) onUnauthorized();
    throw err;
  }
  return body as T;
}

/**
 * A POST whose answer is audio (POST /v1/synthesize for the agent form's "hear it"): the same session, CSRF token
 * and error envelope as `request`, the body as a Blob.
 */
export async function postForBlob(path: string, json: unknown): Promise<Blob> {
  if (!csrfToken && csrfPending) await csrfPending.catch(() => {});
  let res: Response;
  try {
    res = await fetch(API_BASE + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
      credentials: 'same-origin',
      body: JSON.stringify(json),
    });
  } catch {
    throw new ApiError(0, 'network_error', 'network_error', 'The platform could not be reached.', null, null);
  }
  if (res.ok) return res.blob();
  const e = ((await res.json().catch(() => null)) as { error?: Partial<Record<string, string | null>> } | null)?.error;
  throw new ApiError(
    res.status,
    e?.type ?? 'api_error',
    e?.code ?? `http_${res.status}`,
    e?.message ?? `Request failed (${res.status}).`,
    e?.param ?? null,
    e?.requestId ?? res.headers.get('x-request-id'),
  );
}

/** The /v1 surface through the session-authenticated mirror. */
export const v1 = <T>(path: string, opts?: RequestOptions) => request<T>(`/v1${path}`, opts);

export const errorMessage = (e: unknown): string =>
  e instanceof ApiError ? e.message : e instanceof Error ? e.message : String(e);
