import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LanguageModels } from '../../shared/engines/stt/lm/language-models.ts';
import { PocketsphinxSttEngine } from '../../shared/engines/stt/pocketsphinx.ts';
import type { SttRequest } from '../../shared/engines/stt/types.ts';
import { LocalTtsEngine } from '../../shared/engines/tts/local.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import type { Frame } from '../../workers/realtime/pipeline/frames.ts';
import { SHARED_LM_DIR } from '../../support/helpers/shared-lm-dir.ts';
import { StageHarness } from '../../workers/realtime/pipeline/harness.ts';
import { SttStage } from '../../workers/realtime/pipeline/input/stt-stage.ts';
import { countWordErrors } from '../../shared/kernel/text/word-errors.ts';
import { speak } from '../speech/helpers/speech.ts';

const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

/** One utterance through a batch STT stage (the local engine on a call), with or without the agent's model. */
async function hear(pcm: Buffer, languageModel?: SttRequest['languageModel']): Promise<string> {
  const stage = new SttStage(new PocketsphinxSttEngine({ modelDir: MODEL_DIR }), {
    inRate: 16000,
    language: 'en',
    ...(languageModel ? { languageModel } : {}),
    now: () => 0,
    log: createLogger('silent'),
  });
  const h = new StageHarness(stage);
  h.push({ kind: 'start' } as Frame);
  h.push({ kind: 'speech-start', atMs: 0 });
  for (let off = 0, at = 0; off < pcm.length; off += 640, at += 20) {
    h.push({ kind: 'audio-in', pcm: pcm.subarray(off, off + 640), sampleRate: 16000, atMs: at });
  }
  const ms = (pcm.length / 32_000) * 1000;
  h.push({ kind: 'speech-end', atMs: ms + 500, lastSpeechMs: ms });
  const out = await h.until((o) => o.some((f) => f.kind === 'transcript'), 120_000);
  return (out.find((f) => f.kind === 'transcript') as Extract<Frame, { kind: 'transcript' }>).text;
}

describe('batch STT stage with the agent language model', () => {
  it("hears the agent's words with its model (the stage passes it to the engine)", async () => {
    const clinic = JSON.parse(readFileSync('examples/local-stt/clinic-front-desk.json', 'utf8')) as Record<
      string,
      string
    >;
    // Built once per content: runs of this test (and other files building the same text) share the folder.
    const lms = new LanguageModels({
      dir: SHARED_LM_DIR,
      modelDir: MODEL_DIR,
      maxChars: 100_000,
      buildTimeoutMs: 240_000,
    });
    const model = await lms.get(
      lms.sourceText([clinic.systemPrompt!, clinic.firstMessage!, clinic.faq!]),
      'biased to agent agt_x',
    );
    const tts = new LocalTtsEngine();
    const said = 'can i see my lab results in the patient portal';
    const pcm = Buffer.concat([await speak(tts, said), Buffer.alloc(16_000)]);
    tts.close();
    const general = await hear(pcm);
    const biased = await hear(pcm, model);
    expect(countWordErrors(said, general).errors).toBeGreaterThanOrEqual(2);
    expect(countWordErrors(said, biased).errors).toBeLessThanOrEqual(1);
  }, 300_000);
});
