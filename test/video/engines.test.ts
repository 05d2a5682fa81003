import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { buildEngines, engineSummary } from '../../shared/engines/engines.ts';

/** The registries only read the config while they are built; connections are not needed for that. */
const withConfig = (env: Record<string, string>) => buildEngines(loadConfig(env));

describe('engine registries built at start-up', () => {
  it('hold every capability, analysis included: the local engine, Twelve Labs and analyze model servers', () => {
    const engines = engineSummary(
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
    const build = () => withConfig({ VIDEO_MODEL_SERVERS: spec });
    expect(build).toThrow(/^Invalid engine configuration \(video engines\): /);
    expect(build).toThrow(message);
  });

  it('refuse a vendor base URL that is not http(s) or ws(s) when the configuration is read', () => {
    expect(() => loadConfig({ ELEVENLABS_BASE_URL: 'ftp://example.com/v1' })).toThrow(/ELEVENLABS_BASE_URL/);
    expect(() => loadConfig({ ELEVENLABS_BASE_URL: 'not a url' })).toThrow(/ELEVENLABS_BASE_URL/);
  });

  // Issue 14: every role builds the registries at boot, the api role included, so building them must check the
  // configuration without loading any model or its runtime (that would grow every api process for nothing). A
  // fresh process, since this one may have loaded them already; the VAD's first use is the control that the
  // loader hook sees such a package when it does load.
  it('load no model runtime (onnxruntime, Human/TensorFlow.js) until first use', () => {
    const probe = `
      import { registerHooks } from 'node:module';
      const seen = new Set();
      registerHooks({ load: (url, context, next) => (seen.add(url), next(url, context)) });
      const heavy = () => [...seen].filter((u) => /node_modules\\/(onnxruntime|@vladmandic|@tensorflow)/.test(u));
      const { loadConfig } = await import('./shared/kernel/config/index.ts');
      const { buildEngines } = await import('./shared/engines/engines.ts');
      const engines = buildEngines(loadConfig({}));
      await new Promise((r) => setTimeout(r, 100)); // a load started in the background counts too
      const atBoot = heavy();
      await engines.vad.load();
      console.log(JSON.stringify({ atBoot, afterFirstUse: heavy() }));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
      encoding: 'utf8',
    });
    const { atBoot, afterFirstUse } = JSON.parse(out) as { atBoot: string[]; afterFirstUse: string[] };
    expect(atBoot).toEqual([]);
    expect(afterFirstUse.some((u) => u.includes('onnxruntime-node'))).toBe(true);
  });
});
