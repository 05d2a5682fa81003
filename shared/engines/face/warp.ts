import type { MouthFrame } from './visemes.ts';
import { MESH, type Face } from './types.ts';

/** Geometry of one face, in frame pixels, that the warps need. */
export interface FaceRig {
  cx: number;
  /** Lip line (between the inner lips). */
  y0: number;
  mouthWidth: number;
  lipBottom: number;
  chinY: number;
  eyes: { x: number; y: number; width: number; height: number }[];
}

export function rigFromFace(face: Face): FaceRig {
  const p = (i: number) => face.mesh[i]!;
  const [lx, ly] = p(MESH.mouthLeft);
  const [rx, ry] = p(MESH.mouthRight);
  const mouthWidth = Math.max(4, Math.hypot(rx - lx, ry - ly));
  const y0 = (p(MESH.upperLipInner)[1] + p(MESH.lowerLipInner)[1]) / 2;
  const eye = (outer: number, inner: number, upper: number, lower: number) => {
    const [ox, oy] = p(outer);
    const [ix, iy] = p(inner);
    const width = Math.max(3, Math.hypot(ix - ox, iy - oy));
    return {
      x: (ox + ix) / 2,
      y: (p(upper)[1] + p(lower)[1]) / 2,
      width,
      height: Math.max(Math.abs(p(lower)[1] - p(upper)[1]), width * 0.28),
    };
  };
  return {
    cx: (lx + rx) / 2,
    y0,
    mouthWidth,
    lipBottom: Math.max(p(MESH.lowerLipBottom)[1], y0 + 2),
    chinY: Math.max(p(MESH.chin)[1], y0 + mouthWidth * 0.5),
    eyes: [
      eye(MESH.leftEyeOuter, MESH.leftEyeInner, MESH.leftEyeUpper, MESH.leftEyeLower),
      eye(MESH.rightEyeOuter, MESH.rightEyeInner, MESH.rightEyeUpper, MESH.rightEyeLower),
    ],
  };
}

/** Linear interpolation of two rigs (lip-sync tracks faces between landmark keyframes). */
export function lerpRig(a: FaceRig, b: FaceRig, t: number): FaceRig {
  const l = (x: number, y: number) => x + (y - x) * t;
  return {
    cx: l(a.cx, b.cx),
    y0: l(a.y0, b.y0),
    mouthWidth: l(a.mouthWidth, b.mouthWidth),
    lipBottom: l(a.lipBottom, b.lipBottom),
    chinY: l(a.chinY, b.chinY),
    eyes: a.eyes.map((e, i) => {
      const f = b.eyes[i] ?? e;
      return { x: l(e.x, f.x), y: l(e.y, f.y), width: l(e.width, f.width), height: l(e.height, f.height) };
    }),
  };
}

const clamp = (v: number, lo: number, hi: number) => (v < lo ? lo : v > hi ? hi : v);

/**
 * Jaw-drop mouth warp: the lower lip and jaw are pulled down by up to ~0.4 mouth widths (tapering to nothing at
 * the mouth corners and below the chin), the gap above the lower lip is filled with a shaded mouth interior
 * (teeth band when wide open), and the lips spread or round horizontally. Reads `src`, writes `dst` (a copy of
 * src outside the region). Inverse mapping, bilinear in y.
 */
export function warpMouth(
  src: Uint8Array,
  dst: Uint8Array,
  width: number,
  height: number,
  rig: FaceRig,
  mouth: MouthFrame,
): void {
  if (mouth.open < 0.02 && Math.abs(mouth.spread) < 0.05) return;
  const mw = rig.mouthWidth;
  const D = mouth.open * 0.32 * mw;
  const halfW = mw * 0.8;
  const jaw = rig.chinY - rig.y0;
  const yEnd = rig.chinY + 0.35 * jaw;
  const yStart = rig.y0 - 0.3 * mw;
  const x0 = Math.max(0, Math.floor(rig.cx - halfW));
  const x1 = Math.min(width - 1, Math.ceil(rig.cx + halfW));
  const ya = Math.max(0, Math.floor(yStart));
  const yb = Math.min(height - 1, Math.ceil(yEnd));
  const spreadK = 0.14 * mouth.spread;
  const teeth = mouth.open > 0.35;
  for (let y = ya; y <= yb; y++) {
    const below = y >= rig.y0;
    const wyDown = below ? clamp((yEnd - y) / Math.max(1, yEnd - rig.lipBottom), 0, 1) : 0;
    const band = clamp(1 - Math.abs(y - rig.y0) / (0.55 * mw), 0, 1);
    for (let x = x0; x <= x1; x++) {
      const u = (x - rig.cx) / halfW;
      if (u <= -1 || u >= 1) continue;
      const wx = 0.5 * (1 + Math.cos(Math.PI * u));
      // The opening itself is confined between the mouth corners (±0.5 mouth widths).
      const um = (x - rig.cx) / (0.52 * mw);
      const wm = um <= -1 || um >= 1 ? 0 : Math.sqrt(1 - um * um);
      const sx = Math.round(clamp(rig.cx + (x - rig.cx) / (1 + spreadK * band * wx), 0, width - 1));
      const d = D * Math.min(wx, wm * 1.15) * wyDown;
      let sy = y - d;
      const o = (y * width + x) * 3;
      if (below && sy < rig.y0 && d > 0.5) {
        // Inside the opened mouth.
        const g = (y - rig.y0) / d;
        const edge = clamp(wm * 2.2, 0, 1) * clamp(d / 2, 0, 1);
        let r = 118;
        let gg = 46;
        let b = 50;
        if (teeth && g < 0.22 && wm > 0.5) {
          r = 206;
          gg = 196;
          b = 184;
        } else {
          const shade = 1 - 0.6 * Math.sin(Math.PI * g) * wm;
          r *= shade;
          gg *= shade;
          b *= shade;
        }
        const so = (Math.round(clamp(rig.y0 - 1, 0, height - 1)) * width + sx) * 3;
        dst[o] = src[so]! + (r - src[so]!) * edge;
        dst[o + 1] = src[so + 1]! + (gg - src[so + 1]!) * edge;
        dst[o + 2] = src[so + 2]! + (b - src[so + 2]!) * edge;
        continue;
      }
      sy = clamp(sy, 0, height - 1);
      const y1 = Math.floor(sy);
      const y2 = Math.min(height - 1, y1 + 1);
      const fy = sy - y1;
      const a = (y1 * width + sx) * 3;
      const c = (y2 * width + sx) * 3;
      dst[o] = src[a]! + (src[c]! - src[a]!) * fy;
      dst[o + 1] = src[a + 1]! + (src[c + 1]! - src[a + 1]!) * fy;
      dst[o + 2] = src[a + 2]! + (src[c + 2]! - src[a + 2]!) * fy;
    }
  }
}

/** Eyelids lowered over the eyes by `amount` (0 open … 1 shut): lid skin from above the eye slides down. */
export function warpBlink(
  src: Uint8Array,
  dst: Uint8Array,
  width: number,
  height: number,
  rig: FaceRig,
  amount: number,
) {
  if (amount <= 0.01) return;
  for (const e of rig.eyes) {
    const rx = e.width * 0.75;
    const ry = Math.max(e.height * 1.4, e.width * 0.38);
    const top = e.y - ry;
    const lid = top + 2 * ry * amount * 0.85;
    const shift = lid - top;
    if (shift < 1) continue;
    // Lid colour: the skin just under the eye, a shade darker.
    const lidColor = [0, 0, 0];
    let count = 0;
    const py = Math.round(clamp(e.y + ry * 1.25, 0, height - 1));
    for (let x = Math.round(e.x - rx / 3); x <= Math.round(e.x + rx / 3); x++) {
      const s = (py * width + clamp(x, 0, width - 1)) * 3;
      for (let k = 0; k < 3; k++) lidColor[k]! += src[s + k]!;
      count++;
    }
    for (let k = 0; k < 3; k++) lidColor[k] = (lidColor[k]! / Math.max(1, count)) * 0.88;
    const xa = Math.max(0, Math.floor(e.x - rx));
    const xb = Math.min(width - 1, Math.ceil(e.x + rx));
    const ya = Math.max(0, Math.floor(top));
    const yb = Math.min(height - 1, Math.ceil(lid + 1));
    for (let y = ya; y <= yb; y++) {
      const dy = (y - e.y) / ry;
      for (let x = xa; x <= xb; x++) {
        const dx = (x - e.x) / rx;
        const inside = 1 - (dx * dx + dy * dy);
        if (inside <= 0) continue;
        const alpha = clamp(inside * 3, 0, 1);
        if (y - shift > top) continue;
        const o = (y * width + x) * 3;
        const lash = Math.abs(y - lid) < 1.2 ? 0.5 : 1;
        for (let k = 0; k < 3; k++) dst[o + k] = (src[o + k]! + (lidColor[k]! * lash - src[o + k]!) * alpha) | 0;
      }
    }
  }
}

/** Blink envelope for a frame: blinks every 2.5-5.5 s (deterministic per clip), ~170 ms each. */
export function blinkAt(frame: number, fps: number, seed = 7): number {
  const t = frame / fps;
  let next = 1.2;
  let k = seed;
  while (next + 0.2 < t) {
    k = (k * 1103515245 + 12345) & 0x7fffffff;
    next += 2.5 + (k % 3000) / 1000;
  }
  const dt = t - next;
  if (dt < 0 || dt > 0.17) return 0;
  return Math.sin((dt / 0.17) * Math.PI);
}
