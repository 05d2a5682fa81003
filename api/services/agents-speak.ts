import type { FastifyRequest } from 'fastify';
import { meterOf } from '../../shared/domains/agents/metering.ts';
import { engineToApiError } from '../../shared/kernel/errors/engine-error.ts';
import { AUDIO_CONTENT_TYPES, encodeStream } from '../../shared/kernel/audio/index.ts';
import type { SpeakBody } from '../../shared/contracts/agents.ts';
import { resolveProviderKey } from '../../shared/platform/keys/provider-key.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { requireActiveAgent } from './agents.ts';
import { holdLocalSynthesis } from './local-synthesis-limit.ts';
import { settleFailed } from './speech.ts';

/**
 * Speaks text with the agent's voice: its ttsProvider, voiceId, ttsModel and language, speed from the body or
 * the styleProfile (pitch from the styleProfile). The whole file is encoded before answering so that a failure
 * is an error envelope, never a truncated file. Metered in `tts` credits by characters.
 */
export async function speakAsAgent(
  infra: Infra,
  req: FastifyRequest,
  agentId: string,
  body: SpeakBody,
): Promise<{ contentType: string; body: Buffer }> {
  const developerId = req.auth.developerId;
  const agent = await requireActiveAgent(infra.db, developerId, agentId);
  const engine = infra.engines.tts.get(agent.tts_provider);
  const key = await resolveProviderKey(infra, { engine, developerId, headers: req.headers });
  const billable = key?.billable ?? true;
  req.providerUsed = engine.provider;
  req.usageBypassed = !billable;
  engine.checkText(body.text, 'text');
  const release = holdLocalSynthesis(infra, engine, developerId);
  try {
    return await speakHeld();
  } finally {
    release();
  }

  async function speakHeld(): Promise<{ contentType: string; body: Buffer }> {
    const reservation = await meterOf(infra)?.reserve({
      developerId,
      category: 'tts',
      units: body.text.length,
      unit: 'characters',
      provider: engine.provider,
      billable,
      requestId: req.id,
      operation: 'synthesize',
    });
    const signal = AbortSignal.timeout(120_000);
    try {
      const audio = await engine.synthesize({
        text: body.text,
        voiceId: agent.voice_id,
        speed: body.speed ?? agent.style_profile?.speed ?? 1,
        pitch: agent.style_profile?.pitch ?? 1,
        model: agent.tts_model,
        language: agent.language,
        apiKey: key?.key,
        owner: { tenant: developerId },
        signal,
      });
      const out: Buffer[] = [];
      for await (const c of encodeStream(audio.chunks, { inputRate: audio.sampleRate, format: body.format, signal })) {
        out.push(c);
      }
      await reservation?.commit(body.text.length);
      return { contentType: AUDIO_CONTENT_TYPES[body.format], body: Buffer.concat(out) };
    } catch (e) {
      // A local synthesis stopped at its CPU deadline is charged for the work done (docs/speech.md).
      await settleFailed(reservation, body.text.length, e, 0);
      throw engineToApiError(e, engine.provider);
    }
  }
}
