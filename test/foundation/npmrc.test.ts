import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * Issue 34: a plain `npm ci` in a fresh clone must work. onnxruntime-node's postinstall downloads its CUDA provider
 * from outside the npm registry unless told to skip; the project's own .npmrc says so, so habit (`npm ci`, `npm i`)
 * needs no environment variable.
 */
const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

describe('the project .npmrc', () => {
  it('sets onnxruntime-node-install=skip, and npm reads it as project config', async () => {
    const lines = readFileSync(join(root, '.npmrc'), 'utf8').split('\n');
    expect(lines.map((l) => l.trim())).toContain('onnxruntime-node-install=skip');
    const { stdout } = await run('npm', ['config', 'get', 'onnxruntime-node-install'], {
      cwd: root,
      env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: '', npm_config_onnxruntime_node_install: '' },
    });
    expect(stdout.trim()).toBe('skip');
  });

  it('is the key onnxruntime-node’s install script reads, and it then exits before any download', async () => {
    const script = join(root, 'node_modules', 'onnxruntime-node', 'script', 'install.js');
    // As npm runs it for a dependency: the package's own package.json is not the project's.
    const env = {
      PATH: process.env.PATH ?? '',
      npm_config_local_prefix: root,
      npm_package_json: join(root, 'node_modules', 'onnxruntime-node', 'package.json'),
      npm_config_onnxruntime_node_install: 'skip',
    };
    const { stdout, stderr } = await run(process.execPath, [script], { env, timeout: 20_000 });
    expect(`${stdout}${stderr}`).toBe('');
  });
});
