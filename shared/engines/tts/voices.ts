import type { Voice } from './types.ts';

/** A voice of the local (default) engines: which synthesizer renders it and with which native voice. */
export interface LocalVoice extends Voice {
  synth: 'flite' | 'espeak-ng';
  /** flite `-voice` name or espeak-ng `-v` argument. */
  native: string;
  sampleRate: number;
  /** The synthesizer shifts this voice's pitch natively (flite f0_shift); otherwise pitch is done by resampling. */
  nativePitch: boolean;
}

/**
 * Flite's built-in 16 kHz voices (Debian `flite` 2.2: `flite -lv` lists kal, kal16, awb, rms, slt, awb_time; kal
 * is 8 kHz and awb_time a limited-domain clock voice, so both are left out). `rms` ignores flite's f0_shift.
 */
export const FLITE_VOICES: LocalVoice[] = [
  flite('slt', 'SLT (US English, female)', 'en-US', 'female', true),
  flite('rms', 'RMS (US English, male)', 'en-US', 'male', false),
  flite('awb', 'AWB (Scottish English, male)', 'en-GB', 'male', true),
  flite('kal16', 'Kal (US English, male, diphone)', 'en-US', 'male', true),
];

/**
 * `default` (the contract's default voiceId) is Kal16, flite's diphone voice: it renders about 5× faster than the
 * clustergen voices (slt, rms, awb), which is what keeps the first byte under 150 ms, and pocketsphinx
 * recognizes it well (round-trip WER 6.9 % vs slt 11.9 %, see docs/speech.md).
 */
export const DEFAULT_VOICE_ID = 'flite-kal16';

function flite(native: string, name: string, language: string, gender: Voice['gender'], nativePitch: boolean) {
  return {
    id: `flite-${native}`,
    name,
    language,
    gender,
    provider: 'default',
    synth: 'flite' as const,
    native,
    sampleRate: 16000,
    nativePitch,
  };
}

/** Parses `espeak-ng --voices` into voices: each language once (male), plus a female variant (+f3). */
export function parseEspeakVoices(listing: string): LocalVoice[] {
  const out: LocalVoice[] = [];
  const seen = new Set<string>();
  for (const line of listing.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    // Pty Language Age/Gender VoiceName File Other…
    if (cols.length < 5) continue;
    const lang = cols[1]!;
    const file = cols[4]!;
    if (file.startsWith('mb/') || seen.has(lang)) continue; // mbrola voices need separate data packages
    seen.add(lang);
    const name = cols[3]!.replace(/_/g, ' ');
    for (const variant of ['m', 'f'] as const) {
      out.push({
        id: `espeak-${lang}${variant === 'f' ? '-f' : ''}`,
        name: `${name} (espeak-ng${variant === 'f' ? ', female variant' : ''})`,
        language: lang,
        gender: variant === 'f' ? 'female' : 'male',
        provider: 'default',
        synth: 'espeak-ng',
        native: variant === 'f' ? `${lang}+f3` : lang,
        sampleRate: 22050,
        nativePitch: false,
      });
    }
  }
  return out;
}
