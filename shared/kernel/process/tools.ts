/**
 * The external programs the platform runs, and where each one is. Paths come from the config schema
 * (FFMPEG_PATH, FFPROBE_PATH, SPEECH_FLITE_BIN, …), applied once at boot by `configureTools` (createInfra calls
 * it); until then, and in code that runs without a platform (unit tests, scripts), each tool is found on PATH by
 * its usual name.
 */
export type Tool =
  'ffmpeg' | 'ffprobe' | 'flite' | 'espeak' | 'pocketsphinx' | 'sphinx_lm_convert' | 'tesseract' | 'apertium';

export type ToolPaths = Record<Tool, string>;

const DEFAULTS: ToolPaths = {
  ffmpeg: 'ffmpeg',
  ffprobe: 'ffprobe',
  flite: 'flite',
  espeak: 'espeak-ng',
  pocketsphinx: 'pocketsphinx_continuous',
  sphinx_lm_convert: 'sphinx_lm_convert',
  tesseract: 'tesseract',
  apertium: 'apertium',
};

let paths: ToolPaths = { ...DEFAULTS };

/** The config variables that name each tool (see shared/kernel/config/areas/tools.ts and areas/speech.ts). */
export interface ToolConfig {
  FFMPEG_PATH: string;
  FFPROBE_PATH: string;
  SPEECH_FLITE_BIN: string;
  SPEECH_ESPEAK_BIN: string;
  POCKETSPHINX_PATH: string;
  SPHINX_LM_CONVERT_PATH: string;
  TESSERACT_PATH: string;
  APERTIUM_PATH: string;
}

/** Applies the configured paths (process-wide: a binary's location is a fact about the machine, not a request). */
export function configureTools(config: ToolConfig): void {
  paths = {
    ffmpeg: config.FFMPEG_PATH,
    ffprobe: config.FFPROBE_PATH,
    flite: config.SPEECH_FLITE_BIN,
    espeak: config.SPEECH_ESPEAK_BIN,
    pocketsphinx: config.POCKETSPHINX_PATH,
    sphinx_lm_convert: config.SPHINX_LM_CONVERT_PATH,
    tesseract: config.TESSERACT_PATH,
    apertium: config.APERTIUM_PATH,
  };
}

/** Where `tool` is: the configured path, read at spawn time (never at import time). */
export function toolPath(tool: Tool): string {
  return paths[tool];
}
