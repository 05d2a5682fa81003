import { accountLimit, ensureAccount } from '../../shared/platform/metering/accounts.ts';
import type { Estimate, EstimateBody } from '../../shared/domains/billing/estimate-contracts.ts';
import { ifSet } from '../../shared/contracts/absent.ts';
import { fundableCalls, fundingBlock, readFunding } from '../../shared/domains/billing/funding.ts';
import type { MeterCategory } from '../../shared/platform/metering/types.ts';
import { creditWeights } from '../../shared/platform/metering/weights.ts';
import { resolveSessionEngines, speechFor } from '../../shared/domains/realtime/engines.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { VIDEO_VENDORS } from '../../shared/domains/video/vendor-keys.ts';
import { resolveProviderKey } from '../../shared/platform/keys/provider-key.ts';
import { requireActiveAgent } from './sessions.ts';

type Headers = Record<string, string | string[] | undefined>;

/**
 * What a call minute is assumed to hold, for a call estimate (the real call is reserved reply by reply and charged
 * for what it used): the caller speaks half the time (STT seconds), the agent the other half at 15 characters a
 * second (TTS characters), 4 replies a minute, each reading the system prompt and 500 tokens of conversation and
 * writing 60.
 */
export const CALL_ASSUMPTIONS = {
  callerSpeechShare: 0.5,
  agentSpeechShare: 0.5,
  agentCharsPerSecond: 15,
  repliesPerMinute: 4,
  conversationTokensPerReply: 500,
  outputTokensPerReply: 60,
} as const;

interface Line {
  category: MeterCategory;
  operation: string;
  units: number;
  unit: string;
  provider: string;
  billable: boolean;
}

/**
 * POST /v1/estimate: prices a planned operation for the caller's tier and keys, with the same key resolution the
 * operation itself uses (header → stored → platform key; the caller's own key is not billed) and the same credit
 * weights. Records nothing and holds nothing.
 */
export async function estimate(
  infra: Infra,
  auth: { developerId: string; keyId: string; tier: string },
  body: EstimateBody,
  headers: Headers,
): Promise<Estimate> {
  const { lines, assumptions } = await linesOf(infra, auth.developerId, body, headers);
  const w = creditWeights(infra.config);
  const items = lines.map((l) => ({
    ...l,
    units: Math.round(l.units * 1000) / 1000,
    credits: l.billable ? w.credits(l.category, l.operation, l.units) : 0,
  }));
  const credits = items.reduce((n, i) => n + i.credits, 0);
  const a = await ensureAccount(infra.db, infra.config, auth.developerId);
  const remaining = Math.max(0, accountLimit(a) - a.used);
  const past = Math.max(0, credits - remaining);
  const funding = await readFunding(infra.db, infra.config, auth.developerId, auth.keyId);
  const perCall = body.kind === 'campaign' ? Math.ceil(credits / body.recipients) : 0;
  return {
    kind: body.kind,
    tier: auth.tier,
    items,
    credits,
    remaining,
    // Any limit that would stop it: the balance (on a hard-limit tier) or a daily cap with too little room today.
    sufficient: fundingBlock(funding, credits) === null,
    ...(a.overage_rate > 0 && past > 0
      ? { overage: { credits: past, usd: Math.round(past * a.overage_rate * 100) / 100_000 } }
      : {}),
    ...(funding.daily ? { dailyCap: { cap: funding.daily.cap, remaining: funding.daily.remaining } } : {}),
    ...(body.kind === 'campaign'
      ? {
          campaign: {
            recipients: body.recipients,
            creditsPerCall: perCall,
            callsFundedNow: perCall > 0 ? Math.min(body.recipients, fundableCalls(funding, perCall)) : body.recipients,
          },
        }
      : {}),
    ...ifSet('assumptions', assumptions),
  };
}

async function linesOf(
  infra: Infra,
  developerId: string,
  body: EstimateBody,
  headers: Headers,
): Promise<{ lines: Line[]; assumptions: Record<string, number> | null }> {
  switch (body.kind) {
    case 'synthesis': {
      const engine = infra.engines.tts.get(body.provider);
      const key = await resolveProviderKey(infra, { engine, developerId, headers });
      const units = body.characters ?? body.text!.length;
      const billable = key?.billable ?? true;
      return {
        lines: [line('tts', 'synthesize', units, 'characters', engine.provider, billable)],
        assumptions: null,
      };
    }
    case 'transcription': {
      const engine = infra.engines.stt.get(body.provider);
      const key = await resolveProviderKey(infra, { engine, developerId, headers });
      return {
        lines: [line('stt', 'transcribe', body.seconds, 'audio seconds', engine.provider, key?.billable ?? true)],
        assumptions: null,
      };
    }
    case 'video': {
      const provider = body.provider ?? 'default';
      const vendor = VIDEO_VENDORS[provider];
      const key = vendor && (await resolveProviderKey(infra, { ...vendor, developerId, headers }));
      const billable = key ? key.billable : true;
      const unit = body.type === 'analyze' ? 'input video seconds' : 'generated video seconds';
      return {
        lines: [line('video', `video.${body.type}`, body.seconds, unit, provider, billable)],
        assumptions: null,
      };
    }
    case 'call':
      return callLines(infra, developerId, body, headers);
    case 'campaign': {
      // Each call priced as a call estimate of minutesPerCall on the phone, times the recipients.
      const one = await callLines(
        infra,
        developerId,
        { kind: 'call', agentId: body.agentId, minutes: body.minutesPerCall, channel: 'twilio' },
        headers,
      );
      return {
        lines: one.lines.map((l) => ({ ...l, units: l.units * body.recipients })),
        assumptions: { ...one.assumptions, recipients: body.recipients, minutesPerCall: body.minutesPerCall },
      };
    }
  }
}

async function callLines(
  infra: Infra,
  developerId: string,
  body: Extract<EstimateBody, { kind: 'call' }>,
  headers: Headers,
): Promise<{ lines: Line[]; assumptions: Record<string, number> }> {
  const agent = await requireActiveAgent(infra, developerId, body.agentId);
  const engines = await resolveSessionEngines(infra, speechFor(infra), developerId, agent, body.channel, headers);
  const llmKey = await resolveProviderKey(infra, {
    engine: infra.engines.llm.get(agent.llm_provider),
    developerId,
    headers,
  });
  const a = CALL_ASSUMPTIONS;
  const seconds = body.minutes * 60;
  const replies = Math.ceil(body.minutes * a.repliesPerMinute);
  const tokensPerReply =
    Math.ceil(agent.system_prompt.length / 4) + a.conversationTokensPerReply + a.outputTokensPerReply;
  return {
    lines: [
      line('session', 'session.minutes', Math.ceil(body.minutes), 'connected minutes', body.channel, true),
      line(
        'stt',
        'session.stt',
        Math.ceil(seconds * a.callerSpeechShare),
        'audio seconds',
        engines.sttProvider,
        engines.sttKey?.billable ?? false,
      ),
      line(
        'tts',
        'session.tts',
        Math.ceil(seconds * a.agentSpeechShare * a.agentCharsPerSecond),
        'characters',
        engines.ttsProvider,
        engines.ttsKey?.billable ?? false,
      ),
      line(
        'llm',
        'session.llm',
        replies * tokensPerReply,
        'tokens (input + output)',
        agent.llm_provider,
        // No key needed (the local reply engine): free, as the call itself meters it (runtime.ts).
        llmKey?.billable ?? false,
      ),
    ],
    assumptions: { ...a, tokensPerReply, replies },
  };
}

function line(
  category: MeterCategory,
  operation: string,
  units: number,
  unit: string,
  provider: string,
  billable: boolean,
): Line {
  return { category, operation, units, unit, provider, billable };
}
