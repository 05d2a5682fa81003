import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderReadme } from '../../scripts/env-docs.ts';
import { EnvSchema } from '../../shared/kernel/config/schema.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('documents every environment variable with its default (run `npm run docs:env` after adding one)', () => {
    expect(renderReadme(readme)).toBe(readme);
  });

  it('describes every variable in the schema', () => {
    const undocumented = Object.entries(EnvSchema.shape)
      .filter(([name, s]) => !/_(API_KEY|BASE_URL)$/.test(name) && !(s as { description?: string }).description)
      .map(([name]) => name);
    expect(undocumented).toEqual([]);
  });

  it('shows the two commands a newcomer needs', () => {
    expect(readme).toContain('npm run up');
    expect(readme).toContain('npm test');
  });
});
