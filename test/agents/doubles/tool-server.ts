import { startDouble, type Double, type Recorded } from '../../../shared/domains/agent-tests/simulators/http-double.ts';

/** A custom-tool endpoint: answers each call with `respond` after `delayMs`, unless the caller has gone by then. */
export async function startToolServer(
  respond: (rec: Recorded) => { status?: number; body: string; delayMs?: number },
): Promise<Double> {
  return startDouble(async (rec, res) => {
    const r = respond(rec);
    if (r.delayMs) {
      await new Promise<void>((ok) => {
        const timer = setTimeout(ok, r.delayMs);
        res.once('close', () => (clearTimeout(timer), ok()));
      });
    }
    if (res.destroyed) return;
    res.writeHead(r.status ?? 200, { 'content-type': 'application/json' });
    res.end(r.body);
  });
}
