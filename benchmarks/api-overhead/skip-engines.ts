import { registerHooks } from 'node:module';

/**
 * Benchmarks only, loaded before the platform (`--import` or a first import): the engine registries' build step
 * (`buildEngines` in shared/composition/engines-boot.ts, issue 14) becomes a no-op and every other module loads as deployed,
 * so the api role can be measured with and without it from the same code.
 */
registerHooks({
  resolve(specifier, context, next) {
    const r = next(specifier, context);
    if (r.url.endsWith('/shared/engines/boot.ts'))
      return { url: 'data:text/javascript,export function buildEngines(){return {}}', shortCircuit: true };
    return r;
  },
});
