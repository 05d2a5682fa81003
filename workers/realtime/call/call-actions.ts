import twilio from 'twilio';
import type { TransferTarget } from '../../../shared/contracts/agents.ts';
import { recordTransfer } from '../../../shared/domains/realtime/sessions.ts';
import { updateLiveCall, whisperPath } from '../../../shared/domains/realtime/twilio-calls.ts';
import type { Frame } from '../pipeline/frames.ts';
import type { SessionInit } from './types.ts';

/** The voice loop's `transfer` frame: hand the call to `target`, cold or warm, with the agent's summary. */
export type TransferFrame = Extract<Frame, { kind: 'transfer' }>;

/**
 * `<Dial>` TwiML that hands the caller to a person: a number or a SIP address; for a warm transfer the person
 * first hears the whisper (`url`) — who is calling and why — and is then bridged to the caller.
 */
export function transferTwiml(target: TransferTarget, whisperUrl: string | null): string {
  const vr = new twilio.twiml.VoiceResponse();
  const dial = vr.dial();
  const attrs = whisperUrl ? { url: whisperUrl, method: 'POST' as const } : {};
  if (target.to.startsWith('sip')) dial.sip(attrs, target.to);
  else dial.number(attrs, target.to);
  return vr.toString();
}

/**
 * What the session does to the phone call itself, through Twilio's REST API: hang up, or replace the media
 * stream with a `<Dial>` (which ends the stream; the agent's legs end there, so they are billed to the hand-off).
 * A direct (browser) session has no call to update: hanging up is closing its socket, which the session does.
 */
export class CallActions {
  constructor(
    private readonly s: SessionInit,
    private readonly callSid: () => string | null,
  ) {}

  get canTransfer(): boolean {
    return this.s.transport.channel === 'twilio' && this.callSid() !== null;
  }

  async hangUp(): Promise<void> {
    const sid = this.callSid();
    if (this.s.transport.channel !== 'twilio' || !sid) return;
    await updateLiveCall(this.s.infra, sid, { status: 'completed' }).catch((e: Error) =>
      this.s.log.warn({ sessionId: this.s.sessionId, err: e.message }, 'hang-up through the REST API failed'),
    );
  }

  /** Records the transfer frame in the trace, then updates the call. False when Twilio refused or was unreachable. */
  async transfer(frame: TransferFrame, target: TransferTarget, atMs: number): Promise<boolean> {
    const sid = this.callSid();
    if (!sid) return false;
    const pub = this.s.infra.config.PUBLIC_BASE_URL.replace(/\/+$/, '');
    const whisper = frame.mode === 'warm' ? pub + whisperPath(this.s.sessionId) : null;
    try {
      // Written first: the whisper callback reads the summary as soon as the person picks up.
      await recordTransfer(this.s.infra.db, this.s.sessionId, {
        target: frame.target,
        to: target.to,
        mode: frame.mode,
        summary: frame.summary ?? '',
        atMs: Math.round(atMs),
      });
      await updateLiveCall(this.s.infra, sid, { twiml: transferTwiml(target, whisper) });
      this.s.log.info({ sessionId: this.s.sessionId, target: frame.target, mode: frame.mode }, 'call transferred');
      return true;
    } catch (e) {
      this.s.log.warn({ sessionId: this.s.sessionId, err: (e as Error).message }, 'transfer failed');
      await recordTransfer(this.s.infra.db, this.s.sessionId, null).catch(() => {});
      return false;
    }
  }
}
