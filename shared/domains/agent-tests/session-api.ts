import { performance } from 'node:perf_hooks';

/** The platform a scenario calls, as the agent's developer. */
export interface Target {
  /** The platform's base URL (api and realtime roles). */
  url: string;
  apiKey: string;
  agentId: string;
  /** The agent configuration version to call (agent versions); the agent as it is when absent. */
  agentVersion?: number;
  /** The call's template variables (`{{name}}`), as a real call's session-create body gives them. */
  variables?: Record<string, string | number | boolean>;
}

/** What a target adds to a session-create body: its version and variables. */
function targetFields(t: Target): Record<string, unknown> {
  return {
    ...(t.agentVersion ? { agentVersion: t.agentVersion } : {}),
    ...(t.variables ? { variables: t.variables } : {}),
  };
}

/** One API request as the agent's developer: the status, the JSON body, and Retry-After when one was sent. */
export async function api<T>(
  t: Target,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T; retryAfterS: number | null }> {
  const res = await fetch(`${t.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', ...init.headers },
  });
  const text = await res.text();
  const retryAfter = Number(res.headers.get('retry-after'));
  return {
    status: res.status,
    body: (text ? JSON.parse(text) : null) as T,
    retryAfterS: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
  };
}

/**
 * How long a scenario waits for the platform to admit its call: a test never takes a call slot the fleet does not
 * have (503 over capacity) or the developer's concurrency allows (429); it waits for one, as a caller's retry would.
 */
const ADMISSION_WAIT_MS = 120_000;

/** POSTs a session-creating request, waiting (Retry-After, else 1 s) while the platform answers 503 or 429. */
async function admitted<T>(t: Target, path: string, body: Record<string, unknown>, signal?: AbortSignal) {
  const deadline = performance.now() + ADMISSION_WAIT_MS;
  for (;;) {
    const r = await api<T>(t, path, { method: 'POST', body: JSON.stringify(body), signal });
    if ((r.status !== 503 && r.status !== 429) || performance.now() > deadline || signal?.aborted) return r;
    await new Promise((res) => setTimeout(res, Math.min(10, r.retryAfterS ?? 1) * 1000));
  }
}

/** POST /v1/sessions/twilio (no number is dialled: reserved 555-01xx numbers). `extra` joins the body. */
export function createSession(t: Target, signal?: AbortSignal, extra: Record<string, unknown> = {}) {
  return admitted<{ twiml: string; sessionId: string; message?: string }>(
    t,
    '/v1/sessions/twilio',
    { agentId: t.agentId, from: '+15550100001', to: '+15550100002', ...targetFields(t), ...extra },
    signal,
  );
}

/** POST /v1/sessions/direct: the session and the single-use token of its socket (the direct protocol). */
export function createDirectSession(t: Target, signal?: AbortSignal) {
  return admitted<{ sessionId: string; token: string; url: string }>(
    t,
    '/v1/sessions/direct',
    { agentId: t.agentId, ...targetFields(t) },
    signal,
  );
}
