import { encodeWav } from '../../../shared/audio/wav.ts';

/** A growable Int16 buffer. */
class Track {
  data = new Int16Array(8000 * 30);
  length = 0;
  ensure(n: number): void {
    if (n <= this.data.length) return;
    let size = this.data.length;
    while (size < n) size *= 2;
    const next = new Int16Array(size);
    next.set(this.data.subarray(0, this.length));
    this.data = next;
  }
}

/**
 * Both sides of a call on one timeline: left = caller, right = agent, at one sample rate. The caller's audio
 * is the clock (it arrives in real time); agent audio is laid down where it starts playing (after what is already
 * queued, never before "now"), and a barge-in cuts the agent's channel back to "now", since the flushed audio was
 * never heard. Capped at `maxSeconds`.
 */
export class StereoRecorder {
  private readonly caller = new Track();
  private readonly agent = new Track();
  private agentCursor = 0;
  private readonly max: number;

  constructor(
    readonly sampleRate: number,
    maxSeconds: number,
  ) {
    this.max = sampleRate * maxSeconds;
  }

  get durationMs(): number {
    return Math.round((Math.max(this.caller.length, this.agentCursor) / this.sampleRate) * 1000);
  }

  addCaller(samples: Int16Array): void {
    const n = Math.min(samples.length, this.max - this.caller.length);
    if (n <= 0) return;
    this.caller.ensure(this.caller.length + n);
    this.caller.data.set(samples.subarray(0, n), this.caller.length);
    this.caller.length += n;
  }

  addAgent(samples: Int16Array): void {
    const start = Math.max(this.agentCursor, this.caller.length);
    const n = Math.min(samples.length, this.max - start);
    if (n <= 0) return;
    this.agent.ensure(start + n);
    if (start > this.agent.length) this.agent.data.fill(0, this.agent.length, start);
    this.agent.data.set(samples.subarray(0, n), start);
    this.agent.length = Math.max(this.agent.length, start + n);
    this.agentCursor = start + n;
  }

  /** Barge-in: agent audio after "now" was flushed and never played. */
  cutAgent(): void {
    const now = this.caller.length;
    if (this.agentCursor > now) {
      this.agent.data.fill(0, now, this.agentCursor);
      this.agent.length = Math.min(this.agent.length, now);
      this.agentCursor = now;
    }
  }

  /** 16-bit stereo WAV. */
  toWav(): Buffer {
    const n = Math.max(this.caller.length, this.agent.length);
    const out = Buffer.alloc(n * 4);
    for (let i = 0; i < n; i++) {
      out.writeInt16LE(i < this.caller.length ? this.caller.data[i]! : 0, i * 4);
      out.writeInt16LE(i < this.agent.length ? this.agent.data[i]! : 0, i * 4 + 2);
    }
    return encodeWav(out, this.sampleRate, 2);
  }
}
