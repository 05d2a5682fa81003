import workletUrl from './capture-worklet.js?url';

/**
 * The browser side of WS /v1/agents/:id/session (the direct protocol), lifted from the realtime role's
 * /realtime/ page into a module: microphone → 16 kHz PCM16 frames of 20 ms; binary PCM16 at OUT_RATE back to the
 * speaker; `mark` echoed once the audio before it has played, so the server knows what the caller heard;
 * `clear` drops queued audio (barge-in).
 */
export const OUT_RATE = 24000;
export const IN_RATE = 16000;
const FRAME = 320; // 20 ms at 16 kHz

export type VoiceEvent =
  | { kind: 'started'; sessionId: string }
  | { kind: 'you'; text: string }
  | { kind: 'agent'; text: string }
  | { kind: 'interrupted' }
  | { kind: 'error'; message: string }
  | { kind: 'closed'; code: number; reason: string };

/** Downsamples float blocks at `inRate` to 16 kHz by averaging, emitting whole 20 ms PCM16 frames. */
export class Decimator {
  private acc: number[] = [];
  private frac = 0;
  constructor(private readonly ratio: number) {}
  push(x: Float32Array, emit: (frame: Int16Array) => void): void {
    const r = this.ratio;
    for (let i = this.frac; i < x.length; i += r) {
      let s = 0;
      let n = 0;
      for (let k = Math.floor(i); k < Math.min(x.length, Math.floor(i + r)); k++) {
        s += x[k]!;
        n++;
      }
      this.acc.push(n ? s / n : 0);
    }
    this.frac = this.frac + Math.ceil((x.length - this.frac) / r) * r - x.length;
    while (this.acc.length >= FRAME) {
      const f = this.acc.splice(0, FRAME);
      const pcm = new Int16Array(FRAME);
      for (let i = 0; i < FRAME; i++) pcm[i] = Math.max(-32768, Math.min(32767, Math.round(f[i]! * 32767)));
      emit(pcm);
    }
  }
}

export class DirectVoice {
  private ws: WebSocket | null = null;
  private ctx: AudioContext | null = null;
  private mic: MediaStream | null = null;
  private node: AudioWorkletNode | null = null;
  private playAt = 0;
  private sources: AudioBufferSourceNode[] = [];
  private marks: Array<{ name: string; at: number }> = [];
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly onEvent: (e: VoiceEvent) => void) {}

  /** `token` comes from POST /portal/api/v1/sessions/direct (minted with the portal session, never an API key). */
  async start(agentId: string, token: string): Promise<void> {
    const ctx = new AudioContext();
    this.ctx = ctx;
    await ctx.audioWorklet.addModule(workletUrl);
    this.mic = await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: true, noiseSuppression: true, channelCount: 1 },
    });
    const src = ctx.createMediaStreamSource(this.mic);
    this.node = new AudioWorkletNode(ctx, 'capture');
    src.connect(this.node);
    const dec = new Decimator(ctx.sampleRate / IN_RATE);
    this.node.port.onmessage = (e: MessageEvent<Float32Array>) =>
      dec.push(e.data, (pcm) => {
        if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(pcm.buffer);
      });
    const proto = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(
      `${proto}://${location.host}/v1/agents/${encodeURIComponent(agentId)}/session?token=${encodeURIComponent(token)}&outputRate=${OUT_RATE}`,
    );
    this.ws = ws;
    ws.binaryType = 'arraybuffer';
    ws.onmessage = (e: MessageEvent<string | ArrayBuffer>) =>
      typeof e.data === 'string'
        ? this.control(JSON.parse(e.data) as Record<string, unknown>)
        : this.play(new Int16Array(e.data));
    ws.onclose = (e) => {
      this.onEvent({ kind: 'closed', code: e.code, reason: e.reason });
      this.stop();
    };
    this.timer = setInterval(() => this.flushMarks(), 20);
  }

  private play(pcm: Int16Array): void {
    const ctx = this.ctx;
    if (!ctx) return;
    const buf = ctx.createBuffer(1, pcm.length, OUT_RATE);
    const ch = buf.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) ch[i] = pcm[i]! / 32768;
    const s = ctx.createBufferSource();
    s.buffer = buf;
    s.connect(ctx.destination);
    this.playAt = Math.max(this.playAt, ctx.currentTime + 0.05);
    s.start(this.playAt);
    this.playAt += buf.duration;
    this.sources.push(s);
    s.onended = () => {
      this.sources = this.sources.filter((x) => x !== s);
    };
  }

  private flushMarks(): void {
    const now = this.ctx?.currentTime ?? Infinity;
    while (this.marks.length && this.marks[0]!.at <= now)
      this.ws?.send(JSON.stringify({ type: 'mark', name: this.marks.shift()!.name }));
  }

  private control(m: Record<string, unknown>): void {
    if (m.type === 'mark')
      this.marks.push({ name: String(m.name), at: Math.max(this.playAt, this.ctx?.currentTime ?? 0) });
    else if (m.type === 'clear') {
      for (const s of this.sources) s.stop();
      this.sources = [];
      this.playAt = 0;
      for (const k of this.marks.splice(0)) this.ws?.send(JSON.stringify({ type: 'mark', name: k.name }));
    } else if (m.type === 'transcript' && m.final) this.onEvent({ kind: 'you', text: String(m.text) });
    else if (m.type === 'agent_done' && m.text) this.onEvent({ kind: 'agent', text: String(m.text) });
    else if (m.type === 'interrupted') this.onEvent({ kind: 'interrupted' });
    else if (m.type === 'error') this.onEvent({ kind: 'error', message: String(m.message) });
    else if (m.type === 'session.started') this.onEvent({ kind: 'started', sessionId: String(m.sessionId) });
  }

  stop(): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'stop' }));
    this.ws = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.mic?.getTracks().forEach((t) => t.stop());
    this.node?.disconnect();
    void this.ctx?.close();
    this.ctx = null;
    this.mic = null;
    this.node = null;
  }
}
