import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildEmbeddingRegistry } from '../../shared/engines/embeddings/registry.ts';
import { buildLlmRegistry } from '../../shared/engines/llm/registry.ts';
import { buildSpeechEngines } from '../../shared/engines/speech-registry.ts';
import { LOCAL_TTS_PROVIDERS } from '../../shared/contracts/providers.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { createLogger } from '../../shared/kernel/observability/logger.ts';
import { byokHeaderFor, VENDOR_IDS, VENDORS, vendorsWith } from '../../shared/kernel/vendors.ts';

/** Issue #30: one vendor table from which the provider lists, BYOK headers, keyed config and redaction derive. */
describe('the vendor table', () => {
  const config = loadConfig({});

  it("each capability's registry serves exactly the table's vendors of that capability (plus the local engines)", () => {
    const speech = buildSpeechEngines(config);
    const sorted = (xs: readonly string[]) => [...xs].sort();
    // The local TTS engines: `default` always, `rhvoice` where the set-up installed it (RHVOICE=1).
    const localTts = speech.tts.providers().filter((p) => LOCAL_TTS_PROVIDERS.includes(p));
    expect(localTts).toContain('default');
    expect(sorted(speech.tts.providers())).toEqual(sorted([...localTts, ...vendorsWith('tts')]));
    expect(sorted(speech.stt.providers())).toEqual(sorted(['default', ...vendorsWith('stt')]));
    expect(sorted(buildLlmRegistry(config).providers())).toEqual(sorted([...vendorsWith('llm'), 'local']));
    expect(sorted(buildEmbeddingRegistry(config).providers())).toEqual(
      sorted(['default', ...vendorsWith('embeddings')]),
    );
  });

  it('gives every keyed vendor its config variables and every header vendor its header', () => {
    const env = Object.fromEntries(
      VENDOR_IDS.flatMap((v) => [
        [`${v.toUpperCase()}_API_KEY`, `key-${v}`],
        [`${v.toUpperCase()}_BASE_URL`, `http://127.0.0.1:9/${v}`],
      ]),
    );
    const loaded = loadConfig(env);
    for (const v of VENDOR_IDS) {
      expect(loaded.vendors.platformKeys[v]).toBe(`key-${v}`);
      expect(loaded.vendors.baseUrls[v]).toBe(`http://127.0.0.1:9/${v}`);
      const header = (VENDORS[v] as { byokHeader?: string }).byokHeader;
      expect(byokHeaderFor(v)).toBe(header ? `x-provider-key-${header.toLowerCase()}` : null);
    }
    expect(byokHeaderFor('assemblyai')).toBe('x-provider-key-assemblyai');
    expect(byokHeaderFor('no-such-vendor')).toBeNull();
  });

  it("redacts every header vendor's key in logs", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = createLogger('info', {}, sink);
    const headers = Object.fromEntries(
      VENDOR_IDS.flatMap((v) => (byokHeaderFor(v) ? [[byokHeaderFor(v)!, `secret-${v}`]] : [])),
    );
    expect(Object.keys(headers).length).toBeGreaterThan(5);
    log.info({ req: { headers } }, 'request');
    expect(lines.join('')).not.toMatch(/secret-/);
  });
});
