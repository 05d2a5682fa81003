import { performance } from 'node:perf_hooks';
import twilio from 'twilio';
import { TwilioCaller } from '../../shared/domains/agent-tests/twilio-caller.ts';
import type { CallUpdate, SetCallStatus } from './twilio-rest.ts';

/**
 * What Twilio does with a call placed through the REST API (the Twilio REST double's `onCall`), so an outbound
 * call runs end to end against the platform as it would in production:
 *  - status callbacks (`StatusCallback`, signed with X-Twilio-Signature): initiated, ringing, then answered and
 *    completed, or the final busy / no-answer / failed;
 *  - on answer, a signed POST to the call's `Url` for TwiML; a `<Connect><Stream url>` opens that media stream
 *    (connected → start with the `<Parameter>`s as customParameters → real-time μ-law media → stop), and the
 *    callee's behaviour (`talk`) runs on it; `<Hangup/>`, `<Reject/>` or `<Say>` end the call without a stream.
 *  - a live-call update through the REST API (`onUpdate`: `Status=completed`, or new TwiML) ends the media stream
 *    (`stop`), then the call completes, as Twilio does.
 * Each status is also recorded for the REST double's `GET /Calls/{CallSid}.json`.
 * URLs name the platform's public address; `resolve` maps them to where the platform listens, as DNS would.
 */
export type CalleeScript = (
  | { answer: 'busy' | 'no-answer' }
  | { answer: 'failed'; sipResponseCode?: string }
  | {
      answer: 'human' | 'machine';
      /** What the callee does once the stream is open; the call hangs up when it resolves. */
      talk?: (caller: TwilioCaller) => Promise<void>;
    }
) & {
  /** The final status callback is lost (never delivered); the call's record at Twilio still has the status. */
  loseFinalCallback?: boolean;
  /** Runs when the callee answers, before Twilio asks the call's `Url` for TwiML (e.g. to fill a session cap). */
  beforeConnect?: () => Promise<void>;
  /** Runs after the TwiML named a stream, before the stream opens. */
  beforeStream?: () => Promise<void>;
};

export interface CallRun {
  sid: string;
  to: string;
  twiml: string | null;
  caller: TwilioCaller | null;
  finalStatus: string;
  /** performance.now() when the call was placed and when its final status callback was answered. */
  startedAt: number;
  endedAt: number;
  callbacks: Array<{ url: string; status: number; params: Record<string, string> }>;
  error: string | null;
}

export interface TwilioVoice {
  onCall: (call: { sid: string; form: URLSearchParams; setStatus?: SetCallStatus }) => void;
  /** The REST double's `onUpdate`: a hang-up (`Status=completed`/`canceled`) or new TwiML ends the call's stream. */
  onUpdate: (u: CallUpdate) => void;
  runs: CallRun[];
  /** Resolves when every call started so far has ended. */
  idle(): Promise<void>;
}

/** By default the callee waits for the greeting to finish playing, then hangs up. */
async function listenToGreeting(c: TwilioCaller): Promise<void> {
  await c.until(() => c.marksEchoed.length > 0 && !c.playing, 20_000);
}

export function twilioVoice(opts: {
  accountSid: string;
  authToken: string;
  resolve: (publicUrl: string) => string;
  script: (to: string, nth: number) => CalleeScript;
  /** The media clock's speed-up on every call's stream (far-end.ts); 1, real time, when absent. */
  rate?: number;
}): TwilioVoice {
  const runs: CallRun[] = [];
  const pending = new Set<Promise<void>>();
  const seen = new Map<string, number>();
  /** Calls updated through the REST API: ended by Twilio, not by the callee. */
  const hungUp = new Map<string, () => void>();
  const updated = new Set<string>();

  async function post(run: CallRun, url: string, params: Record<string, string>): Promise<Response> {
    const signature = twilio.getExpectedTwilioSignature(opts.authToken, url, params);
    const res = await fetch(opts.resolve(url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
      body: new URLSearchParams(params),
    });
    run.callbacks.push({ url, status: res.status, params });
    return res;
  }

  async function runCall(sid: string, form: URLSearchParams, setStatus?: SetCallStatus): Promise<void> {
    const to = form.get('To') ?? '';
    const nth = (seen.get(to) ?? 0) + 1;
    seen.set(to, nth);
    const script = opts.script(to, nth);
    const run: CallRun = {
      sid,
      to,
      twiml: null,
      caller: null,
      finalStatus: '',
      startedAt: performance.now(),
      endedAt: Number.POSITIVE_INFINITY,
      callbacks: [],
      error: null,
    };
    runs.push(run);
    const statusUrl = form.get('StatusCallback');
    const base = { CallSid: sid, AccountSid: opts.accountSid, From: form.get('From') ?? '', To: to };
    const status = async (CallStatus: string, extra: Record<string, string> = {}) => {
      setStatus?.(CallStatus);
      const lost = FINAL.has(CallStatus) && script.loseFinalCallback;
      if (statusUrl && !lost) await (await post(run, statusUrl, { ...base, CallStatus, ...extra })).arrayBuffer();
      if (FINAL.has(CallStatus)) run.endedAt = performance.now();
    };
    const ended = new Promise<void>((r) => hungUp.set(sid, r));
    await status('initiated');
    await status('ringing');
    if (updated.has(sid)) {
      run.finalStatus = 'canceled';
      return status('canceled');
    }
    if (script.answer === 'failed') {
      run.finalStatus = 'failed';
      return status('failed', { SipResponseCode: script.sipResponseCode ?? '404' });
    }
    if (script.answer !== 'human' && script.answer !== 'machine') {
      run.finalStatus = script.answer;
      return status(script.answer);
    }
    const talk = script.talk ?? listenToGreeting;
    const started = Date.now();
    await script.beforeConnect?.();
    const answer = await post(run, form.get('Url')!, { ...base, CallStatus: 'in-progress', Direction: 'outbound-api' });
    run.twiml = await answer.text();
    await status('in-progress');
    const stream = /<Connect>\s*<Stream url="([^"]+)"[^>]*>([\s\S]*?)<\/Stream>/.exec(run.twiml);
    if (answer.ok && stream) {
      const params: Record<string, string> = {};
      for (const m of stream[2]!.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g))
        params[m[1]!] = m[2]!
          .replace(/&quot;/g, '"')
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&amp;/g, '&');
      const caller = new TwilioCaller({
        url: opts.resolve(unescape(stream[1]!)),
        token: undefined,
        callSid: sid,
        params,
        rate: opts.rate,
      });
      run.caller = caller;
      await script.beforeStream?.();
      await caller.start();
      try {
        // Twilio ends the stream when the call is hung up or given new TwiML through the REST API.
        await Promise.race([talk(caller), ended]);
      } finally {
        caller.stop();
        await Promise.race([caller.closed, new Promise((r) => setTimeout(r, 5000))]);
        caller.close();
      }
    }
    run.finalStatus = 'completed';
    await status('completed', { CallDuration: String(Math.ceil((Date.now() - started) / 1000)) });
  }

  return {
    runs,
    onUpdate: (u) => {
      updated.add(u.callSid);
      hungUp.get(u.callSid)?.();
    },
    onCall: ({ sid, form, setStatus }) => {
      const p = runCall(sid, form, setStatus)
        .catch((e: Error) => {
          const run = runs.find((r) => r.sid === sid);
          if (run) run.error = e.message;
        })
        .finally(() => pending.delete(p));
      pending.add(p);
    },
    async idle() {
      while (pending.size) await Promise.all([...pending]);
    },
  };
}

/** The most calls of `runs` that were up at once (placed, and not yet past their final status). */
export function peakConcurrentCalls(runs: CallRun[]): number {
  const edges = runs.flatMap((r) => [
    [r.startedAt, 1],
    [r.endedAt, -1],
  ]);
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let peak = 0;
  for (const [, d] of edges) peak = Math.max(peak, (open += d!));
  return peak;
}

const FINAL = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);

function unescape(s: string): string {
  return s.replace(/&amp;/g, '&');
}
