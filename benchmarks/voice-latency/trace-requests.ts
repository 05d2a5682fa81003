import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { Session } from 'node:inspector/promises';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RequestStages } from '../lib/bench-platform.ts';

/**
 * A platform process's own view of its requests to `route` (a benchmark's): for each, ms from the HTTP server's
 * start of it to the route handler's start (routing and the onRequest hooks: auth, rate limit), the handler's
 * promise (its database query), sending the answer (serialization, onSend hooks) and the response's finish
 * (written to the socket). `take()` gives their p50/p99 since the last take. Node's own diagnostics channels (http
 * server, Fastify's handler tracing): nothing in the platform changes.
 */
export function traceRequests(route: string, pool: { waitingCount: number }): { take(): RequestStages } {
  const open = new WeakMap<IncomingMessage, number[]>();
  let spans: number[][] = [];
  // Requests whose handler started while queries waited for a connection of the process's database pool.
  let poolQueued = 0;
  diagnostics.subscribe('http.server.request.start', (m) => {
    const { request } = m as { request: IncomingMessage };
    if (request.url?.split('?')[0] === route) open.set(request, [performance.now()]);
  });
  const mark = (s: unknown) =>
    open.get((s as { request: { raw: IncomingMessage } }).request.raw)?.push(performance.now());
  const start = (s: unknown) => {
    if (mark(s) !== undefined && pool.waitingCount > 0) poolQueued++;
  };
  diagnostics
    .tracingChannel('fastify.request.handler')
    .subscribe({ start, end: () => {}, asyncStart: mark, asyncEnd: mark, error: () => {} });
  diagnostics.subscribe('http.server.response.finish', (m) => {
    const t = open.get((m as { request: IncomingMessage }).request);
    if (!t || t.length !== 4) return;
    t.push(performance.now());
    spans.push(t.slice(1).map((x, i) => x - t[i]!));
  });
  return {
    take() {
      const [taken, queued] = [spans, poolQueued];
      spans = [];
      poolQueued = 0;
      const pcts = (i: number | null): [number, number] => {
        const xs = taken.map((s) => (i === null ? s.reduce((a, b) => a + b, 0) : s[i]!)).sort((a, b) => a - b);
        const at = (p: number) =>
          Math.round((xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? 0) * 10) / 10;
        return [at(50), at(99)];
      };
      return {
        n: taken.length,
        poolQueued: queued,
        hooks: pcts(0),
        handler: pcts(1),
        send: pcts(2),
        finish: pcts(3),
        total: pcts(null),
      };
    },
  };
}

/** CPU profiles of this process, one file per span between two calls of `next()` (`<dir>/<pid>-<n>.cpuprofile`). */
export function cpuProfiles(dir: string): { next(): Promise<void> } {
  const session = new Session();
  session.connect();
  let n = 0;
  return {
    async next() {
      if (n > 0) {
        const { profile } = await session.post('Profiler.stop');
        await writeFile(join(dir, `${process.pid}-${n}.cpuprofile`), JSON.stringify(profile));
      } else {
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: 500 });
      }
      n++;
      await session.post('Profiler.start');
    },
  };
}
