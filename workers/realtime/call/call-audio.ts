import { pcmToInt16 } from '../../../shared/kernel/audio/pcm.ts';
import { Resampler } from '../../../shared/kernel/audio/resampler.ts';
import { Playback } from '../pipeline/playback.ts';
import { recordingSpillPath, StereoRecorder } from '../pipeline/output/recorder.ts';
import type { SessionInit } from './types.ts';

/**
 * The agent's audio path of a call: playback to the transport, and the stereo recording (null when recordings are
 * off) that takes the agent's side at the caller's rate as it is sent.
 */
export function callAudio(s: SessionInit, now: () => number): { playback: Playback; recorder: StereoRecorder | null } {
  const { transport, settings } = s;
  const recorder = s.infra.config.REALTIME_RECORDINGS
    ? new StereoRecorder(
        transport.inRate,
        settings.maxSessionSeconds,
        recordingSpillPath(s.infra.config.REDIS_PREFIX, s.sessionId),
      )
    : null;
  const resampler = transport.outRate !== transport.inRate ? new Resampler(transport.outRate, transport.inRate) : null;
  const playback = new Playback(
    {
      outRate: transport.outRate,
      ...(transport.maxChunkMs ? { maxChunkMs: transport.maxChunkMs } : {}),
      sendAudio: (pcm) => {
        transport.sendAudio(pcm);
        if (recorder) recorder.addAgent(resampler ? resampler.process(pcmToInt16(pcm)) : pcmToInt16(pcm));
      },
      sendMark: (n) => transport.sendMark(n),
      sendClear: () => transport.sendClear(),
    },
    now,
  );
  return { playback, recorder };
}
