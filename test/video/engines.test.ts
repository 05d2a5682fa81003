import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/index.ts';
import { buildEngines } from '../../shared/engines/boot.ts';
import type { Infra } from '../../shared/runtime/infra.ts';

/** The registries only read the config while they are built; connections are not needed for that. */
const withConfig = (env: Record<string, string>) => ({ config: loadConfig(env) }) as unknown as Infra;

describe('engine registries built at start-up', () => {
  it('hold every capability, analysis included: the local engine, Twelve Labs and analyze model servers', () => {
    const engines = buildEngines(
      withConfig({ VIDEO_MODEL_SERVERS: 'analyze:videollama=http://gpu-1:9000,lipsync:wav2lip=http://gpu-2:9000/' }),
    );
    expect(engines.analysis).toEqual(['default', 'twelvelabs', 'videollama']);
    expect(engines.lipsync).toContain('wav2lip');
    expect(engines.tts).toContain('default');
    expect(engines.llm.length).toBeGreaterThan(0);
  });

  it.each([
    ['a malformed entry', 'avatar=http://gpu-1:9000', /VIDEO_MODEL_SERVERS entry "avatar=http:\/\/gpu-1:9000" is not/],
    ['a provider named default', 'lipsync:default=http://gpu-1:9000', /"default" names the local engine/],
    ['a provider listed twice', 'lipsync:a=http://gpu-1:9000,lipsync:a=http://gpu-2:9000', /lipsync:a twice/],
  ])('stop the process with a message naming the variable for %s', (_what, spec, message) => {
    const build = () => buildEngines(withConfig({ VIDEO_MODEL_SERVERS: spec }));
    expect(build).toThrow(/^Invalid engine configuration \(video engines\): /);
    expect(build).toThrow(message);
  });

  it('refuse a vendor base URL that is not http(s) or ws(s) when the configuration is read', () => {
    expect(() => loadConfig({ ELEVENLABS_BASE_URL: 'ftp://example.com/v1' })).toThrow(/ELEVENLABS_BASE_URL/);
    expect(() => loadConfig({ ELEVENLABS_BASE_URL: 'not a url' })).toThrow(/ELEVENLABS_BASE_URL/);
  });
});
