import { mock } from 'node:test';
import { z } from 'zod';
import { realtimeEnv } from '../../shared/kernel/config/areas/realtime.ts';
import type { VadEngine } from '../../shared/engines/vad/types.ts';
import type { Call } from './line.ts';
import type { TimedTranscript } from './stt-timeline.ts';
import type { HandedTurn } from './turn-outcome.ts';

// The realtime role's stages, loaded as a role is (a dynamic import: only processes that run it load it).
const { VadStage } = await import('../../workers/realtime/pipeline/input/vad-stage.ts');
const { InputStage } = await import('../../workers/realtime/pipeline/input/input-stage.ts');
const { RnnoiseSuppressor } = await import('../../workers/realtime/pipeline/input/rnnoise.ts');
const { TurnStage } = await import('../../workers/realtime/pipeline/turn/turn-stage.ts');
const { turnDetector } = await import('../../workers/realtime/pipeline/turn/turn-detector-registry.ts');
const { interruptionDetector } = await import('../../workers/realtime/pipeline/turn/interruption-registry.ts');
const { endpointingPolicy } = await import('../../workers/realtime/pipeline/turn/endpointing.ts');

type Frame = Parameters<InstanceType<typeof VadStage>['push']>[0];
type TurnOptions = ConstructorParameters<typeof TurnStage>[1];
type Conv = ConstructorParameters<typeof TurnStage>[0];
export type TurnDetectorName = 'default' | 'entity-hold';

/** The platform's endpointing at its defaults (REALTIME_ENDPOINTING_*, REALTIME_TURN_EAGERNESS; no agent override). */
const ENV = z
  .object({
    REALTIME_ENDPOINTING_MS: realtimeEnv.REALTIME_ENDPOINTING_MS,
    REALTIME_ENDPOINTING_ADAPTIVE: realtimeEnv.REALTIME_ENDPOINTING_ADAPTIVE,
    REALTIME_ENDPOINTING_COMPLETE_MS: realtimeEnv.REALTIME_ENDPOINTING_COMPLETE_MS,
    REALTIME_ENDPOINTING_INCOMPLETE_MS: realtimeEnv.REALTIME_ENDPOINTING_INCOMPLETE_MS,
    REALTIME_PREEMPTIVE_REPLIES: realtimeEnv.REALTIME_PREEMPTIVE_REPLIES,
    REALTIME_TURN_EAGERNESS: realtimeEnv.REALTIME_TURN_EAGERNESS,
    REALTIME_BARGE_IN_MIN_MS: realtimeEnv.REALTIME_BARGE_IN_MIN_MS,
    REALTIME_BARGE_IN_FORCE_MS: realtimeEnv.REALTIME_BARGE_IN_FORCE_MS,
  })
  .parse({});
export const POLICY = endpointingPolicy(ENV, { turn_taking: null });
/** A vendor STT's wait for the final after the endpoint (workers/realtime/call/bootstrap.ts `finalWaitMs`). */
const VENDOR_FINAL_WAIT_MS = 1200;
/** The phone default for agents that name no interruption detector (voice-pipeline.ts). */
const PHONE_INTERRUPTION = { name: 'line-contrast' } as const;

/**
 * The platform's turn-end path over one call: the caller audio through the input processors and the VAD stage into
 * the real turn stage (its turn detector by name, the phone's interruption detector, the platform's endpointing),
 * wired as a call's pipeline is — the turn stage steers the VAD's window upstream (`endpoint-window`, `heard-speech`,
 * `reopen`) — with `transcripts` reaching the turn stage when the audio reaches their `atMs`. The audio is fed one
 * 20 ms frame at a time, each scored before the next: the VAD is never behind. The turn stage's clock is the audio's
 * (`conv.now`), and so are its timers (the wait for a final after the endpoint): node:test's mock timers, advanced
 * 20 ms per frame. Returns the turns handed on (`utterance` frames), in audio time.
 */
export async function replayTurnPath(
  call: Call,
  vad: VadEngine,
  rate: number,
  opts: {
    suppress: boolean;
    detector: TurnDetectorName;
    transcripts: readonly TimedTranscript[];
    /** Each frame between the VAD and the turn stage but the per-frame ones, for tracing one call. */
    trace?: (line: string) => void;
  },
): Promise<HandedTurn[]> {
  let nowMs = 0;
  const inAgent = (t: number) => call.agent.some(([a, b]) => t >= a && t < b);
  const conv: Conv = {
    now: () => nowMs,
    get agentActive() {
      return inAgent(nowMs);
    },
    current: null,
    answeredBy: undefined,
    playback: {
      get speaking() {
        return inAgent(nowMs);
      },
    } as Conv['playback'],
  };
  const settings: TurnOptions['settings'] = {
    endpointing: POLICY,
    bargeInMinMs: ENV.REALTIME_BARGE_IN_MIN_MS,
    bargeInForceMs: ENV.REALTIME_BARGE_IN_FORCE_MS,
    finalWaitMs: VENDOR_FINAL_WAIT_MS,
  };
  const rn = opts.suppress ? new RnnoiseSuppressor(rate) : null;
  const input = rn ? new InputStage([rn]) : null;
  const vadStage = new VadStage(vad, rate, {
    threshold: 0.5,
    startMs: 60,
    endpointMs: POLICY.fixedMs,
    pauseMs: POLICY.preemptive ? 60 : 0,
  });
  const turn = new TurnStage(conv, {
    settings,
    inRate: rate,
    streaming: true,
    detector: turnDetector(
      { policy: POLICY, inRate: rate, streaming: true },
      opts.detector === 'entity-hold' ? { name: 'entity-hold' } : { name: 'default' },
    ),
    interruption: interruptionDetector(settings, PHONE_INTERRUPTION),
  });
  const handed: HandedTurn[] = [];
  let scored = 0;
  let wake: (() => void) | null = null;
  const errors: unknown[] = [];
  // Wired as Pipeline wires a call's stages, with a tap on the VAD's output to know how far it has scored.
  input?.connect((f) => vadStage.push(f));
  vadStage.connect(
    (f) => {
      if (f.kind === 'vad-frame') {
        scored++;
        wake?.();
      }
      if (f.kind !== 'vad-frame' && f.kind !== 'audio-in') opts.trace?.(`${nowMs} vad→turn ${JSON.stringify(f)}`);
      turn.push(f);
    },
    () => {},
  );
  turn.connect(
    (f) => {
      opts.trace?.(`${nowMs} turn→ ${JSON.stringify(f)}`);
      if (f.kind === 'utterance') handed.push({ atMs: nowMs, onsetMs: f.onsetAt, lastSpeechMs: f.lastSpeechAt });
    },
    (f) => {
      opts.trace?.(`${nowMs} turn→vad ${JSON.stringify(f)}`);
      vadStage.pushUp(f);
    },
  );
  for (const s of [input, vadStage, turn])
    if (s)
      s.onError = (_n, e) => {
        errors.push(e);
        wake?.();
      };
  const frameMs = (vad.frameSamples / rate) * 1000;
  const pending = [...opts.transcripts].sort((a, b) => a.atMs - b.atMs);
  mock.timers.enable({ apis: ['setTimeout'], now: 0 });
  try {
    for (let k = 0; k < call.frames.length; k++) {
      while (pending.length > 0 && pending[0]!.atMs <= k * 20) {
        const t = pending.shift()!;
        opts.trace?.(`${nowMs} stt→turn ${t.final ? 'final' : 'interim'} "${t.text}" ending ${t.endMs}`);
        turn.push({ kind: 'transcript', text: t.text, final: t.final, atMs: nowMs, endMs: t.endMs });
      }
      nowMs = (k + 1) * 20;
      const f: Frame = { kind: 'audio-in', pcm: call.frames[k]!, sampleRate: rate, atMs: k * 20 };
      (input ?? vadStage).push(f);
      const want = Math.floor(((k + 1) * 20) / frameMs);
      while (scored < want && errors.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      if (errors.length > 0) throw errors[0] instanceof Error ? errors[0] : new Error(String(errors[0]));
      mock.timers.tick(20);
    }
    turn.push({ kind: 'end', reason: 'caller-hangup' });
  } finally {
    mock.timers.reset();
    rn?.close();
  }
  return handed;
}
