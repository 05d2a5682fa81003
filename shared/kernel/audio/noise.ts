import { mulberry32 } from '../prng.ts';

/**
 * Seeded background noise for a simulated phone line (issue 31): the agent-test runner's `noise` impairment and the
 * robustness benchmark draw from these, so a scenario and a benchmark row at the same type, SNR and seed hear the
 * same line. Each source is a stream: `next()` is the next sample at an RMS of about 1 (the caller scales it to the
 * SNR it wants), so a call's noise is made 20 ms at a time without holding seconds of it.
 */
export const NOISE_TYPES = ['white', 'pink', 'babble', 'hum', 'crackle', 'music'] as const;
export type NoiseType = (typeof NOISE_TYPES)[number];

export interface NoiseSource {
  readonly type: NoiseType;
  /** The next sample, at an RMS of about 1 over a second or more. */
  next(): number;
}

export interface NoiseOptions {
  type: NoiseType;
  rate: number;
  seed: number;
  /** Babble: the voices to mix (16-bit samples at `rate`, several seconds each); at least one. */
  voices?: readonly Int16Array[];
  /** Hum: the mains frequency (default 50 Hz). */
  mainsHz?: 50 | 60;
}

/** A noise source of `opts.type`; the same options give the same samples. */
export function noiseSource(opts: NoiseOptions): NoiseSource {
  const rand = mulberry32(opts.seed);
  switch (opts.type) {
    case 'white':
      return white(rand);
    case 'pink':
      return pink(rand);
    case 'hum':
      return hum(rand, opts.rate, opts.mainsHz ?? 50);
    case 'crackle':
      return crackle(rand, opts.rate);
    case 'babble':
      return babble(rand, opts.voices ?? []);
    case 'music':
      return music(rand, opts.rate);
  }
}

/** Fills `out` from the source at `rms` and adds it to `into` (16-bit samples, clipped): one line's noise, mixed. */
export function addNoise(into: Int16Array, source: NoiseSource, rms: number): Int16Array {
  for (let i = 0; i < into.length; i++) {
    const v = Math.round(into[i]! + source.next() * rms);
    into[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
  }
  return into;
}

/** The noise RMS that puts noise `snrDb` under speech of RMS `speechRms`. */
export function noiseRmsFor(speechRms: number, snrDb: number): number {
  return speechRms / 10 ** (snrDb / 20);
}

/** Uniform in [−√3, √3]: RMS 1, flat spectrum (line hiss). */
function white(rand: () => number): NoiseSource {
  const a = Math.sqrt(3);
  return { type: 'white', next: () => (rand() * 2 - 1) * a };
}

/**
 * Pink (1/f, −3 dB per octave: most room and car noise is nearer this than white), by Paul Kellet's economy filter
 * on white noise; scaled to RMS 1 (the filter's gain on unit-RMS white noise, measured over 30 s: 2.925).
 */
function pink(rand: () => number): NoiseSource {
  let b0 = 0;
  let b1 = 0;
  let b2 = 0;
  const a = Math.sqrt(3);
  return {
    type: 'pink',
    next() {
      const w = (rand() * 2 - 1) * a;
      b0 = 0.99765 * b0 + w * 0.099046;
      b1 = 0.963 * b1 + w * 0.2965164;
      b2 = 0.57 * b2 + w * 1.0526913;
      return (b0 + b1 + b2 + w * 0.1848) / PINK_RMS;
    },
  };
}
/** RMS of Kellet's filter on unit-RMS white noise. */
const PINK_RMS = 2.925;

/**
 * Mains hum: the fundamental (50 or 60 Hz) and its odd harmonics up to the 9th, falling 6 dB an octave, with a slow
 * wobble of level as a ground loop has; a random phase per harmonic from the seed.
 */
function hum(rand: () => number, rate: number, mainsHz: number): NoiseSource {
  const harmonics = [1, 2, 3, 5, 7, 9].filter((h) => h * mainsHz < rate / 2);
  const amps = harmonics.map((h) => 1 / h);
  const norm = Math.sqrt(amps.reduce((s, a) => s + (a * a) / 2, 0));
  const phases = harmonics.map(() => rand() * 2 * Math.PI);
  const step = harmonics.map((h) => (2 * Math.PI * h * mainsHz) / rate);
  const wobble = (2 * Math.PI * 0.3) / rate;
  let n = 0;
  return {
    type: 'hum',
    next() {
      let v = 0;
      for (let k = 0; k < harmonics.length; k++) v += amps[k]! * Math.sin(phases[k]! + step[k]! * n);
      const level = 1 + 0.1 * Math.sin(wobble * n);
      n++;
      return (v / norm) * level;
    },
  };
}

/**
 * A crackling line: a low hiss with clicks (a few to a few dozen a second, in bursts), each a sharp decaying
 * impulse, and now and then a stretch of loud crackle as a loose connector makes. Scaled to RMS about 1.
 */
function crackle(rand: () => number, rate: number): NoiseSource {
  const a = Math.sqrt(3);
  let env = 0;
  let sign = 1;
  let burstLeft = 0;
  const decay = Math.exp(-1 / (0.0008 * rate)); // a click rings for about a millisecond
  return {
    type: 'crackle',
    next() {
      if (burstLeft > 0) burstLeft--;
      else if (rand() < 1.5 / rate) burstLeft = Math.round((0.05 + rand() * 0.25) * rate); // a burst of 50–300 ms
      const perSecond = burstLeft > 0 ? 400 : 8;
      if (rand() < perSecond / rate) {
        env = 2 + rand() * 10;
        sign = rand() < 0.5 ? -1 : 1;
      }
      const click = sign * env;
      env *= decay;
      return (click + (rand() * 2 - 1) * a * 0.3) / CRACKLE_RMS;
    },
  };
}
const CRACKLE_RMS = 1.47;

/**
 * Babble: several voices at once, as in a call centre or a café, each voice looping from its own seeded offset and
 * level, so no word stands out. Scaled by the voices' combined RMS.
 */
function babble(rand: () => number, voices: readonly Int16Array[]): NoiseSource {
  const live = voices.filter((v) => v.length > 0);
  if (live.length === 0) throw new RangeError('babble noise needs at least one voice');
  const pos = live.map((v) => Math.floor(rand() * v.length));
  const gain = live.map(() => 0.6 + rand() * 0.8);
  let power = 0;
  live.forEach((v, k) => (power += (gain[k]! * rmsOf(v)) ** 2));
  const norm = Math.sqrt(power) || 1;
  return {
    type: 'babble',
    next() {
      let s = 0;
      for (let k = 0; k < live.length; k++) {
        const v = live[k]!;
        s += v[pos[k]!]! * gain[k]!;
        pos[k] = (pos[k]! + 1) % v.length;
      }
      return s / norm;
    },
  };
}

/**
 * Music on the line (a radio, hold music): a score generated from the seed, a melody over a bass line in a major
 * key, four notes a second, each a few harmonics under a plucked envelope. Scaled to RMS about 1.
 */
function music(rand: () => number, rate: number): NoiseSource {
  const scale = [0, 2, 4, 5, 7, 9, 11, 12];
  const root = 220 * 2 ** (Math.floor(rand() * 12) / 12);
  const noteLen = Math.round(rate / 4);
  let n = 0;
  let melodyHz = root;
  let bassHz = root / 2;
  let phaseM = 0;
  let phaseB = 0;
  return {
    type: 'music',
    next() {
      const inNote = n % noteLen;
      if (inNote === 0) {
        melodyHz = root * 2 ** (scale[Math.floor(rand() * scale.length)]! / 12);
        if ((n / noteLen) % 4 === 0) bassHz = (root / 2) * 2 ** ([0, 5, 7, 9][Math.floor(rand() * 4)]! / 12);
      }
      n++;
      const env = Math.exp(-inNote / (0.12 * rate));
      phaseM += (2 * Math.PI * melodyHz) / rate;
      phaseB += (2 * Math.PI * bassHz) / rate;
      const m = Math.sin(phaseM) + 0.5 * Math.sin(2 * phaseM) + 0.25 * Math.sin(3 * phaseM);
      const b = Math.sin(phaseB) + 0.3 * Math.sin(2 * phaseB);
      return (env * m + 0.6 * b) / MUSIC_RMS;
    },
  };
}
const MUSIC_RMS = 0.59;

function rmsOf(x: Int16Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!;
  return Math.sqrt(s / Math.max(1, x.length));
}
