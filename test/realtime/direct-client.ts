import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';

/** A direct-protocol client: JSON control + binary PCM16 (16 kHz in); echoes marks at once (instant playback). */
export class DirectClient {
  readonly ws: WebSocket;
  readonly events: Array<Record<string, unknown>> = [];
  audioBytes = 0;
  closeCode: number | null = null;
  readonly closed: Promise<void>;
  readonly opened: Promise<void>;
  constructor(url: string, headers: Record<string, string> = {}) {
    this.ws = new WebSocket(url, { headers });
    this.opened = new Promise((r, j) => {
      this.ws.once('open', () => r());
      this.ws.once('error', j);
    });
    this.closed = new Promise((r) => this.ws.once('close', (code) => ((this.closeCode = code), r())));
    this.ws.on('message', (data, isBinary) => {
      if (isBinary) {
        this.audioBytes += (data as Buffer).length;
        return;
      }
      const m = JSON.parse(data.toString()) as Record<string, unknown>;
      this.events.push(m);
      if (m.type === 'mark') this.ws.send(JSON.stringify({ type: 'mark', name: m.name }));
    });
  }
  private speaking = false;
  private line: NodeJS.Timeout | null = null;

  /** Sends PCM16 16 kHz in real-time 20 ms frames, then 1 s of silence. */
  async speak(pcm: Buffer): Promise<void> {
    this.speaking = true;
    const all = Buffer.concat([pcm, Buffer.alloc(32000)]);
    const t0 = performance.now();
    try {
      for (let off = 0, i = 0; off < all.length; off += 640, i++) {
        this.ws.send(all.subarray(off, off + 640), { binary: true });
        const wait = t0 + (i + 1) * 20 - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    } finally {
      this.speaking = false;
    }
  }

  /**
   * Between `speak`s, silence in 20 ms frames until the socket closes, as a microphone sends: a client that goes
   * mute after its words leaves the platform's turn decision waiting on audio that never comes, and a loaded
   * machine decides later than the socket's idle limit.
   */
  keepLineOpen(): void {
    if (this.line) return;
    const frame = Buffer.alloc(640);
    this.line = setInterval(() => {
      if (!this.speaking && this.ws.readyState === WebSocket.OPEN) this.ws.send(frame, { binary: true });
    }, 20);
    void this.closed.then(() => {
      if (this.line) clearInterval(this.line);
      this.line = null;
    });
  }
}
