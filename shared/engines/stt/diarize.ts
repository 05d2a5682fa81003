import { frameFeatures, type FrameFeatures } from '../../kernel/audio/features.ts';

export interface SpanForDiarization {
  start: number;
  end: number;
}

export interface DiarizationOptions {
  /** Upper bound on distinct speakers (default 2). */
  maxSpeakers?: number;
  /** Mean silhouette below which the clusters are not believed and one speaker is reported (default 0.2). */
  minSilhouette?: number;
}

/**
 * Speaker labels for transcript segments by clustering a voice fingerprint per segment: the mean and standard
 * deviation of MFCC 1-12 over its voiced frames plus its median log-pitch. Features are z-scored across segments,
 * then k-means (k = 2…maxSpeakers, farthest-point initialisation, so the result is deterministic) picks the k
 * with the best mean silhouette; when even that silhouette is weak, everything is one speaker. Labels are
 * numbered in order of first appearance: `speaker_0`, `speaker_1`, …
 */
export function diarize(
  samples: Int16Array,
  sampleRate: number,
  spans: SpanForDiarization[],
  opts: DiarizationOptions = {},
): string[] {
  if (spans.length === 0) return [];
  if (spans.length === 1) return ['speaker_0'];
  const feats = frameFeatures(samples, sampleRate);
  const vectors = spans.map((s) => fingerprint(feats, s));
  const X = zscore(vectors);
  const maxK = Math.min(opts.maxSpeakers ?? 2, X.length);
  let best: { labels: number[]; score: number } = { labels: X.map(() => 0), score: -1 };
  for (let k = 2; k <= maxK; k++) {
    const labels = kmeans(X, k);
    const score = silhouette(X, labels);
    if (score > best.score) best = { labels, score };
  }
  const labels = best.score >= (opts.minSilhouette ?? 0.2) ? best.labels : X.map(() => 0);
  const order = new Map<number, number>();
  return labels.map((l) => {
    if (!order.has(l)) order.set(l, order.size);
    return `speaker_${order.get(l)}`;
  });
}

function fingerprint(feats: FrameFeatures, span: SpanForDiarization): number[] {
  const from = Math.max(0, Math.floor(span.start * 100));
  const to = Math.min(feats.mfcc.length, Math.ceil(span.end * 100));
  // Voiced frames carry the speaker's timbre; fall back to all frames of the span.
  let frames: number[] = [];
  for (let f = from; f < to; f++) if (feats.f0[f]! > 0) frames.push(f);
  if (frames.length < 5) frames = Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
  const dims = 12;
  const mean = new Array<number>(dims).fill(0);
  const sq = new Array<number>(dims).fill(0);
  for (const f of frames) {
    const c = feats.mfcc[f]!;
    for (let d = 0; d < dims; d++) {
      mean[d]! += c[d + 1]!;
      sq[d]! += c[d + 1]! ** 2;
    }
  }
  const n = Math.max(1, frames.length);
  const std = mean.map((m, d) => Math.sqrt(Math.max(0, sq[d]! / n - (m / n) ** 2)));
  const pitches = frames.map((f) => feats.f0[f]!).filter((p) => p > 0);
  pitches.sort((a, b) => a - b);
  const medianPitch = pitches.length ? pitches[Math.floor(pitches.length / 2)]! : 120;
  // Pitch gets extra weight (three copies): it separates voices more reliably than any single cepstrum.
  const logPitch = Math.log(medianPitch);
  return [...mean.map((m) => m / n), ...std, logPitch, logPitch, logPitch];
}

function zscore(vectors: number[][]): number[][] {
  const dims = vectors[0]!.length;
  const out = vectors.map((v) => v.slice());
  for (let d = 0; d < dims; d++) {
    const col = vectors.map((v) => v[d]!);
    const m = col.reduce((a, b) => a + b, 0) / col.length;
    const sd = Math.sqrt(col.reduce((a, b) => a + (b - m) ** 2, 0) / col.length) || 1;
    for (const v of out) v[d] = (v[d]! - m) / sd;
  }
  return out;
}

function dist2(a: number[], b: number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i]! - b[i]!) ** 2;
  return s;
}

function kmeans(X: number[][], k: number): number[] {
  // Farthest-point initialisation from the point farthest from the mean.
  const mean = X[0]!.map((_, d) => X.reduce((a, v) => a + v[d]!, 0) / X.length);
  const centers: number[][] = [];
  let first = 0;
  X.forEach((v, i) => {
    if (dist2(v, mean) > dist2(X[first]!, mean)) first = i;
  });
  centers.push(X[first]!.slice());
  while (centers.length < k) {
    let far = 0;
    let farD = -1;
    X.forEach((v, i) => {
      const d = Math.min(...centers.map((c) => dist2(v, c)));
      if (d > farD) {
        farD = d;
        far = i;
      }
    });
    centers.push(X[far]!.slice());
  }
  let labels = X.map(() => 0);
  for (let iter = 0; iter < 50; iter++) {
    const next = X.map((v) => {
      let bi = 0;
      for (let c = 1; c < k; c++) if (dist2(v, centers[c]!) < dist2(v, centers[bi]!)) bi = c;
      return bi;
    });
    const changed = next.some((l, i) => l !== labels[i]);
    labels = next;
    for (let c = 0; c < k; c++) {
      const members = X.filter((_, i) => labels[i] === c);
      if (members.length)
        centers[c] = members[0]!.map((_, d) => members.reduce((a, v) => a + v[d]!, 0) / members.length);
    }
    if (!changed) break;
  }
  return labels;
}

/** Mean silhouette coefficient (−1…1); singletons count 0. */
function silhouette(X: number[][], labels: number[]): number {
  const k = Math.max(...labels) + 1;
  let total = 0;
  for (let i = 0; i < X.length; i++) {
    const byCluster = new Array<number>(k).fill(0);
    const counts = new Array<number>(k).fill(0);
    for (let j = 0; j < X.length; j++) {
      if (i === j) continue;
      byCluster[labels[j]!]! += Math.sqrt(dist2(X[i]!, X[j]!));
      counts[labels[j]!]!++;
    }
    const own = labels[i]!;
    if (counts[own] === 0) continue;
    const a = byCluster[own]! / counts[own]!;
    let b = Infinity;
    for (let c = 0; c < k; c++) if (c !== own && counts[c]! > 0) b = Math.min(b, byCluster[c]! / counts[c]!);
    if (b === Infinity) continue;
    total += (b - a) / Math.max(a, b);
  }
  return total / X.length;
}
