import { spawn, type ChildProcess } from 'node:child_process';

/** Starts a tsx script as a child process and waits until a predicate over its output says it is ready. */
export async function startChild(
  args: string[],
  env: Record<string, string>,
  ready: (output: string) => boolean,
  timeoutMs = 60_000,
): Promise<{ child: ChildProcess; output: () => string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--no-deprecation', '--import', 'tsx', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + timeoutMs;
  while (!ready(out)) {
    if (child.exitCode !== null) throw new Error(`child exited early:\n${out}`);
    if (Date.now() > deadline) throw new Error(`child not ready in time:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.on('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
