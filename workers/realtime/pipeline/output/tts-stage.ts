import { setTimeout as sleep } from 'node:timers/promises';
import { Resampler } from '../../../../shared/kernel/audio/resampler.ts';
import { speakableText } from '../../../../shared/engines/tts/speakable.ts';
import type { TtsEngine } from '../../../../shared/engines/tts/types.ts';
import type { AssistantTurn } from '../assistant-turn.ts';
import type { DataFrame } from '../frames.ts';
import { fixedPhrases } from './phrase-cache.ts';
import { Stage } from '../stage.ts';

export interface TtsVoice {
  voiceId: string;
  speed: number;
  pitch: number;
  model?: string | null;
  language?: string;
  apiKey?: string;
  /** The developer whose call this is: local engines serve live calls first, then fairly by developer. */
  developerId?: string;
}

/**
 * Audio queued ahead of the listener beyond which the next sentence waits. Synthesis runs far faster than speech,
 * so without a limit a long reply is rendered whole while its first sentence plays, and a barge-in throws that work
 * away (on a local engine it is CPU taken from other calls' first audio; on a vendor it is billed characters). Two
 * seconds covers a sentence's synthesis even on a loaded machine.
 */
export const TTS_LOOKAHEAD_MS = 2000;

/**
 * What synthesis reads of the conversation (conversation.ts implements it): the reply a sentence belongs to, on
 * which the stage stamps its times and errors (the turn's trace), how much audio is queued ahead of the listener,
 * and whether a turn's audio is a fixed phrase that may be cached.
 */
export interface TtsTrace {
  now(): number;
  turn(turnId: string): Pick<AssistantTurn, 'synthStartAt' | 'firstAudioAt' | 'error'> | null;
  /** Milliseconds of agent audio sent but not yet played; sentences after the first wait while it is large. */
  queuedAheadMs(): number;
  /**
   * For a turn that speaks a fixed phrase (the first message), the scope its audio may be cached and reused in
   * (the developer: voices and keys are theirs); null for replies, which are never cached.
   */
  cacheScope(turnId: string): string | null;
}

/**
 * sentence → tts-audio. Each sentence is synthesized as its own request (so the first one speaks while the LLM
 * still writes), resampled to the transport's rate with filter state kept across the engine's chunks, and cut off
 * by the stage's AbortSignal on a barge-in. A failed LLM or synthesis is stamped on the reply and reported as a
 * `turn-error` frame.
 */
export class TtsStage extends Stage {
  constructor(
    private readonly engine: TtsEngine,
    private readonly voice: TtsVoice,
    private readonly outRate: number,
    private readonly trace: TtsTrace,
  ) {
    super('tts');
  }

  protected override async onData(frame: DataFrame, signal: AbortSignal): Promise<void> {
    if (frame.kind === 'llm-done') {
      if (frame.error) this.failed(frame.turnId, frame.error);
      this.emit(frame);
      return;
    }
    if (frame.kind !== 'sentence') return this.emit(frame);
    const { turnId, index, text, last } = frame;
    const done = (pcm: Buffer) =>
      this.emit({ kind: 'tts-audio', turnId, sentence: index, text, pcm, sampleRate: this.outRate, last: true });
    if (!text.trim()) {
      if (last) done(Buffer.alloc(0));
      return;
    }
    if (index > 0) await this.paced(signal);
    if (signal.aborted) return;
    const t = this.trace.turn(turnId);
    if (t && t.synthStartAt === null) t.synthStartAt = this.trace.now();
    const scope = this.trace.cacheScope(turnId);
    const v = this.voice;
    const key =
      scope && [scope, this.engine.provider, v.voiceId, v.speed, v.pitch, v.model, this.outRate, text].join('|');
    const hit = key ? fixedPhrases.get(key) : null;
    if (hit) {
      this.firstAudio(turnId);
      for (const pcm of hit) {
        this.emit({ kind: 'tts-audio', turnId, sentence: index, text, pcm, sampleRate: this.outRate, last: false });
      }
      this.emit({
        kind: 'tts-audio',
        turnId,
        sentence: index,
        text,
        pcm: Buffer.alloc(0),
        sampleRate: this.outRate,
        last: true,
        cached: true,
      });
      return;
    }
    const made: Buffer[] | null = key ? [] : null;
    let first = true;
    try {
      const audio = await this.engine.synthesize({
        // A word the local voices would spell out for minutes is cut short rather than failing the call.
        text: speakableText(text),
        voiceId: this.voice.voiceId,
        speed: this.voice.speed,
        pitch: this.voice.pitch,
        model: this.voice.model,
        language: this.voice.language,
        apiKey: this.voice.apiKey,
        // The reply's first sentence is what the caller waits for; later ones have the audio ahead of them as slack.
        priority: index === 0 ? 'interactive' : 'background',
        sampleRate: this.outRate,
        owner: { tenant: this.voice.developerId, live: true },
        signal,
      });
      const rs = audio.sampleRate === this.outRate ? null : new Resampler(audio.sampleRate, this.outRate);
      for await (const chunk of audio.chunks) {
        if (signal.aborted) return;
        const pcm = rs ? rs.processPcm(chunk) : chunk;
        if (!pcm.length) continue;
        if (first) {
          first = false;
          this.firstAudio(turnId);
        }
        made?.push(pcm);
        this.emit({ kind: 'tts-audio', turnId, sentence: index, text, pcm, sampleRate: this.outRate, last: false });
      }
      if (signal.aborted) return;
      const tail = rs ? rs.flushPcm() : Buffer.alloc(0);
      if (key && made) fixedPhrases.set(key, tail.length ? [...made, tail] : made);
      done(tail);
    } catch (e) {
      if (signal.aborted) return;
      this.failed(turnId, `tts: ${(e as Error).message ?? 'error'}`);
      done(Buffer.alloc(0));
    }
  }

  private firstAudio(turnId: string): void {
    const t = this.trace.turn(turnId);
    if (t && t.firstAudioAt === null) t.firstAudioAt = this.trace.now();
  }

  private failed(turnId: string, message: string): void {
    const t = this.trace.turn(turnId);
    if (t) t.error ??= message;
    this.emit({ kind: 'turn-error', turnId, stage: message.split(':')[0]! });
  }

  /** Waits while more than TTS_LOOKAHEAD_MS of audio is queued ahead of the listener (or until cancelled). */
  private async paced(signal: AbortSignal): Promise<void> {
    const ahead = () => this.trace.queuedAheadMs();
    for (let wait = ahead() - TTS_LOOKAHEAD_MS; wait > 0 && !signal.aborted; wait = ahead() - TTS_LOOKAHEAD_MS) {
      await sleep(wait, undefined, { signal }).catch(() => {});
    }
  }
}
