import { isReplyEndMark, replyEndMark } from '../../../shared/contracts/reply-end-mark.ts';
import { words } from './words.ts';

/** How long past its estimated end a sentence whose mark never came back still counts as playing. */
const MARK_GRACE_MS = 2000;

/** The outbound side of a transport: audio at `outRate` (PCM s16le), marks and a buffer flush. */
export interface AudioSink {
  readonly outRate: number;
  /**
   * The longest piece of audio one `sendAudio` may carry, in ms; 20 when absent. A far end that buffers what it is
   * sent (Twilio's media stream) takes audio that is ready in pieces of up to this much: a one-second piece is one
   * message instead of fifty, which at hundreds of calls is CPU on both ends. It plays the same either way.
   */
  readonly maxChunkMs?: number;
  sendAudio(pcm: Buffer): void;
  sendMark(name: string): void;
  sendClear(): void;
}

interface SentSentence {
  turnId: string;
  index: number;
  text: string;
  mark: string;
  /** Estimated playback window on the session clock (ms); refined when the mark comes back. */
  startMs: number;
  endMs: number;
  played: boolean;
  /** Its audio as sent (kept until it has played, so a tentative stop can play the rest again) and when it began. */
  audio: Buffer[];
  audioStartMs: number;
}

/** What a tentative stop (`hold`) took off the line: the audio still to play, sentence by sentence. */
export interface HeldAudio {
  pieces: Array<{ turnId: string; index: number; text: string; pcm: Buffer; open: boolean }>;
}

/**
 * What the agent has said and what the caller has heard. Audio leaves in 20 ms frames as soon as it is made; the
 * far end plays it in order, so each sentence's playback window is estimated from the send time and its duration,
 * and corrected by the echo of the mark sent after it (the far end echoes a mark once the audio before it has
 * played). After a barge-in the words heard are the played sentences plus the elapsed share of the current one.
 */
export class Playback {
  private sentences: SentSentence[] = [];
  private queueEndMs = 0;
  private pending = Buffer.alloc(0);
  private frameBytes: number;
  /** Bytes of the longest piece one `sendAudio` of the sink carries (whole frames). */
  private chunkBytes: number;
  /** Marks flushed by a clear are echoed too; they must not count as played. */
  private flushed = new Set<string>();
  firstAudioAt: number | null = null;
  /** Session-clock time of the last audio frame sent of the current turn. */
  lastSentAt = 0;
  /** The open sentence's audio so far and when it starts playing (estimate). */
  private openAudio: Buffer[] = [];
  private openStartMs = 0;
  /** A tentative stop is on (`hold`): the agent has the floor but is silent until `resume` or a `clear`. */
  private holding = false;
  /** Sentences played again after a tentative stop get marks of their own (the flushed ones are echoed too). */
  private replays = 0;

  constructor(
    private readonly sink: AudioSink,
    private readonly now: () => number,
  ) {
    this.frameBytes = (sink.outRate / 50) * 2;
    this.chunkBytes = this.frameBytes * Math.max(1, Math.floor((sink.maxChunkMs ?? 20) / 20));
  }

  /**
   * True while agent audio is playing or queued at the far end: a sentence is being sent, or a sent sentence's
   * mark has not come back. A far end that never echoes marks is covered by a grace period after the estimate.
   */
  get speaking(): boolean {
    if (this.holding || this.openSentence || this.pending.length > 0) return true;
    const now = this.now();
    return this.sentences.some((s) => !s.played && now < s.endMs + MARK_GRACE_MS);
  }
  private openSentence = false;

  /**
   * Sends synthesized audio of the current sentence in whole 20 ms frames, as many together as the sink takes
   * (`maxChunkMs`); the remainder waits for more or the end of the sentence.
   */
  sendAudio(pcm: Buffer): void {
    const buf = this.pending.length ? Buffer.concat([this.pending, pcm]) : pcm;
    const whole = buf.length - (buf.length % this.frameBytes);
    for (let off = 0; off < whole; off += this.chunkBytes)
      this.frame(buf.subarray(off, Math.min(whole, off + this.chunkBytes)));
    this.pending = Buffer.from(buf.subarray(whole));
  }

  private frame(f: Buffer): void {
    const now = this.now();
    if (!this.openSentence) {
      this.openStartMs = Math.max(this.queueEndMs, now);
      this.openAudio = [];
    }
    this.openSentence = true;
    this.openAudio.push(f);
    if (this.firstAudioAt === null) this.firstAudioAt = now;
    this.sink.sendAudio(f);
    const durMs = (f.length / 2 / this.sink.outRate) * 1000;
    this.queueEndMs = Math.max(this.queueEndMs, now) + durMs;
    this.lastSentAt = now;
  }

  /** Ends a sentence: flushes the last partial frame (padded with silence) and sends its mark. */
  endSentence(turnId: string, index: number, text: string, startMs: number): void {
    if (this.pending.length) {
      const padded = Buffer.alloc(this.frameBytes);
      this.pending.copy(padded);
      this.pending = Buffer.alloc(0);
      this.frame(padded);
    }
    this.openSentence = false;
    const mark = this.replays ? `${turnId}:${index}:r${this.replays}` : `${turnId}:${index}`;
    const audio = this.openAudio;
    this.openAudio = [];
    this.sentences.push({
      turnId,
      index,
      text,
      mark,
      startMs,
      endMs: this.queueEndMs,
      played: false,
      audio,
      audioStartMs: this.openStartMs,
    });
    this.sink.sendMark(mark);
  }

  /**
   * A reply is complete (all its sentences sent, its text done): its end mark goes out behind them. It is no
   * sentence: it neither counts as playing (`speaking`) nor moves any estimate when it comes back (`onMark`).
   */
  endReply(turnId: string): void {
    this.sink.sendMark(replyEndMark(turnId));
  }

  /** Audio sent but, by the estimate, not yet played (ms). */
  queuedAheadMs(): number {
    return Math.max(0, this.queueEndMs - this.now());
  }

  /** Playback start estimate for the next sentence. */
  nextStartMs(): number {
    return Math.max(this.queueEndMs, this.now());
  }

  /** A mark came back: the audio before it has played. Returns the sentence, or null for a flushed/unknown mark. */
  onMark(name: string): SentSentence | null {
    if (isReplyEndMark(name) || this.flushed.delete(name)) return null;
    const s = this.sentences.find((x) => x.mark === name);
    if (!s || s.played) return null;
    const now = this.now();
    // Re-anchor: the far end was behind (or ahead of) the estimate by this much.
    const drift = now - s.endMs;
    s.played = true;
    s.audio = [];
    s.endMs = now;
    if (drift > 0) {
      for (const later of this.sentences) {
        if (!later.played && later.startMs >= s.startMs) {
          later.startMs += drift;
          later.endMs += drift;
        }
      }
      this.queueEndMs += drift;
    }
    return s;
  }

  /** All sentences of a turn played (their marks came back). */
  turnPlayed(turnId: string): boolean {
    const of = this.sentences.filter((s) => s.turnId === turnId);
    return of.length > 0 && of.every((s) => s.played);
  }

  /** Words of `turnId` heard by session time `atMs`. */
  heardWords(turnId: string, atMs: number): string[] {
    const out: string[] = [];
    for (const s of this.sentences) {
      if (s.turnId !== turnId) continue;
      const w = words(s.text);
      if (s.played && s.endMs <= atMs) {
        out.push(...s.text.split(/\s+/).filter(Boolean));
        continue;
      }
      if (atMs <= s.startMs) break;
      const share = Math.min(1, (atMs - s.startMs) / Math.max(1, s.endMs - s.startMs));
      out.push(
        ...s.text
          .split(/\s+/)
          .filter(Boolean)
          .slice(0, Math.floor(w.length * share)),
      );
      break;
    }
    return out;
  }

  /**
   * A tentative stop: the far end drops what it has queued, as on a barge-in, but the audio not yet played is kept
   * (from the point playing now, by the estimate) so that `resume` plays it again. The agent keeps the floor
   * (`speaking`) until `resume` or `clear`.
   */
  hold(): HeldAudio {
    const now = this.now();
    const bytesFrom = (startMs: number) => Math.max(0, Math.floor(((now - startMs) / 1000) * this.sink.outRate)) * 2;
    const pieces: HeldAudio['pieces'] = [];
    for (const s of this.sentences) {
      if (s.played) continue;
      pieces.push({ ...s, pcm: Buffer.concat(s.audio).subarray(bytesFrom(s.audioStartMs)), open: false });
    }
    if (this.openSentence) {
      const pcm = Buffer.concat([...this.openAudio, this.pending]).subarray(bytesFrom(this.openStartMs));
      pieces.push({ turnId: '', index: -1, text: '', pcm, open: true });
    }
    this.clear();
    this.holding = true;
    return { pieces: pieces.filter((p) => p.pcm.length > 0 || !p.open) };
  }

  /** After a tentative stop: the held audio plays again from where it stopped, each sentence with a mark of its own. */
  resume(held: HeldAudio): void {
    this.holding = false;
    this.replays++;
    for (const p of held.pieces) {
      if (p.pcm.length) this.sendAudio(p.pcm);
      if (!p.open) this.endSentence(p.turnId, p.index, p.text, this.nextStartMs());
    }
  }

  /** Barge-in: flush the far end's buffer; pending marks will be echoed as flushed and ignored. */
  clear(): void {
    this.sink.sendClear();
    this.holding = false;
    this.pending = Buffer.alloc(0);
    this.openAudio = [];
    this.openSentence = false;
    for (const s of this.sentences) if (!s.played) this.flushed.add(s.mark);
    this.sentences = this.sentences.filter((s) => s.played);
    this.queueEndMs = this.now();
  }

  /** Forget a finished turn's bookkeeping. */
  forget(turnId: string): void {
    this.sentences = this.sentences.filter((s) => s.turnId !== turnId);
  }
}
