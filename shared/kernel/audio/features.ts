/**
 * Speech features for speaker clustering: MFCCs (25 ms Hamming frames every 10 ms, 26 mel bands, 13 cepstra) and
 * a per-frame pitch estimate by normalised autocorrelation. Plain TypeScript, no native code.
 */

export interface FrameFeatures {
  /** frames × 13 cepstra (c0 = log energy). */
  mfcc: Float32Array[];
  /** Per frame: F0 in Hz, or 0 when unvoiced/silent. */
  f0: Float32Array;
  /** Per frame: RMS energy of the frame (int16 scale). */
  energy: Float32Array;
}

const FFT_SIZE = 512;

/** In-place iterative radix-2 FFT of (re, im), length a power of two. */
export function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j]!, re[i]!];
      [im[i], im[j]] = [im[j]!, im[i]!];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = (-2 * Math.PI) / len;
    const wr = Math.cos(ang);
    const wi = Math.sin(ang);
    for (let i = 0; i < n; i += len) {
      let cr = 1;
      let ci = 0;
      for (let k = 0; k < len / 2; k++) {
        const a = i + k;
        const b = a + len / 2;
        const tr = re[b]! * cr - im[b]! * ci;
        const ti = re[b]! * ci + im[b]! * cr;
        re[b] = re[a]! - tr;
        im[b] = im[a]! - ti;
        re[a]! += tr;
        im[a]! += ti;
        const ncr = cr * wr - ci * wi;
        ci = cr * wi + ci * wr;
        cr = ncr;
      }
    }
  }
}

function melFilterbank(sampleRate: number, bands: number, lowHz: number, highHz: number): Float64Array[] {
  const mel = (f: number) => 2595 * Math.log10(1 + f / 700);
  const hz = (m: number) => 700 * (10 ** (m / 2595) - 1);
  const lo = mel(lowHz);
  const hi = mel(Math.min(highHz, sampleRate / 2));
  const points = Array.from({ length: bands + 2 }, (_, i) => hz(lo + ((hi - lo) * i) / (bands + 1)));
  const bins = points.map((f) => Math.floor(((FFT_SIZE + 1) * f) / sampleRate));
  const out: Float64Array[] = [];
  for (let b = 1; b <= bands; b++) {
    const filt = new Float64Array(FFT_SIZE / 2 + 1);
    const [l, c, r] = [bins[b - 1]!, bins[b]!, bins[b + 1]!];
    for (let k = l; k < c; k++) filt[k] = (k - l) / Math.max(1, c - l);
    for (let k = c; k <= r; k++) filt[k] = (r - k) / Math.max(1, r - c);
    out.push(filt);
  }
  return out;
}

/** MFCC, pitch and energy per 10 ms frame of mono Int16 audio. */
export function frameFeatures(samples: Int16Array, sampleRate: number): FrameFeatures {
  const win = Math.round(0.025 * sampleRate);
  const hop = Math.round(0.01 * sampleRate);
  const bands = 26;
  const filters = melFilterbank(sampleRate, bands, 60, 7600);
  const hamming = Float64Array.from({ length: win }, (_, i) => 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (win - 1)));
  const nFrames = samples.length >= win ? Math.floor((samples.length - win) / hop) + 1 : 0;
  const mfcc: Float32Array[] = [];
  const f0 = new Float32Array(nFrames);
  const energy = new Float32Array(nFrames);
  const re = new Float64Array(FFT_SIZE);
  const im = new Float64Array(FFT_SIZE);
  const logMel = new Float64Array(bands);
  const minLag = Math.floor(sampleRate / 400);
  const maxLag = Math.ceil(sampleRate / 60);
  for (let f = 0; f < nFrames; f++) {
    const off = f * hop;
    re.fill(0);
    im.fill(0);
    let e = 0;
    let prev = samples[off - 1] ?? 0;
    for (let i = 0; i < win; i++) {
      const x = samples[off + i]!;
      e += x * x;
      re[i] = (x - 0.97 * prev) * hamming[i]!;
      prev = x;
    }
    energy[f] = Math.sqrt(e / win);
    fft(re, im);
    for (let b = 0; b < bands; b++) {
      const filt = filters[b]!;
      let s = 0;
      for (let k = 0; k <= FFT_SIZE / 2; k++) if (filt[k]) s += filt[k]! * (re[k]! * re[k]! + im[k]! * im[k]!);
      logMel[b] = Math.log(s + 1e-3);
    }
    const c = new Float32Array(13);
    for (let n = 0; n < 13; n++) {
      let s = 0;
      for (let b = 0; b < bands; b++) s += logMel[b]! * Math.cos((Math.PI * n * (b + 0.5)) / bands);
      c[n] = s;
    }
    mfcc.push(c);
    f0[f] = energy[f]! > 300 ? pitchOf(samples, off, Math.max(win, 2 * maxLag), minLag, maxLag, sampleRate) : 0;
  }
  return { mfcc, f0, energy };
}

/** F0 by normalised autocorrelation over a window long enough for two periods of 60 Hz; 0 when unvoiced. */
function pitchOf(s: Int16Array, off: number, len: number, minLag: number, maxLag: number, rate: number): number {
  const end = Math.min(s.length, off + len);
  const n = end - off;
  if (n <= maxLag + 10) return 0;
  let best = 0;
  let bestLag = 0;
  for (let lag = minLag; lag <= maxLag; lag++) {
    let num = 0;
    let e1 = 0;
    let e2 = 0;
    for (let i = off; i < end - lag; i++) {
      const a = s[i]!;
      const b = s[i + lag]!;
      num += a * b;
      e1 += a * a;
      e2 += b * b;
    }
    const r = num / Math.sqrt(e1 * e2 + 1);
    if (r > best) {
      best = r;
      bestLag = lag;
    }
  }
  return best > 0.5 ? rate / bestLag : 0;
}
