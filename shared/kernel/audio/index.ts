export * from './ffmpeg.ts';
export * from './formats.ts';
export * from './pcm.ts';
export * from './resampler.ts';
export * from './wav.ts';
export * from './pauses.ts';
