import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** Debian's chromium (installed by scripts/setup.d/40-portal.sh); puppeteer-core downloads no browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = join(process.cwd(), '.artifacts', 'portal');

export function checkPrerequisites(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/setup.sh (it installs chromium)`);
  if (!existsSync(join(process.cwd(), 'portal', 'dist', 'index.html')))
    throw new Error('portal/dist is not built: run scripts/setup.sh (setup.d/40-portal.sh builds it)');
}

/**
 * `fakeAudio`: a WAV file the fake microphone plays instead of chromium's tone, so a test can say something to an
 * agent through the page's real capture path. Played once (then silence), or over and over with `loopFakeAudio`:
 * chromium starts the file when the page opens the microphone, not when the agent listens, so on a loaded machine
 * a file played once can be over before the call is up — a caller who is not heard asks again.
 */
export async function launchChromium(opts: { fakeAudio?: string; loopFakeAudio?: boolean } = {}): Promise<Browser> {
  const args = ['--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--mute-audio'];
  // A fake microphone (a tone, or the given file) granted without a prompt, so "talk to it" runs its real audio path.
  args.push('--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream');
  if (opts.fakeAudio) {
    args.push(`--use-file-for-fake-audio-capture=${opts.fakeAudio}${opts.loopFakeAudio ? '' : '%noloop'}`);
  }
  args.push('--autoplay-policy=no-user-gesture-required');
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, args });
}

/** Console messages a page logged that report a Content-Security-Policy refusal. */
export function watchCsp(page: Page): string[] {
  const refused: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
  });
  return refused;
}

/**
 * Requests the page has open now, tracked from here on: `settle` waits until none has been open for `idleMs`, and
 * when that does not come within `timeoutMs` it fails naming the page and what is still open (a bare
 * `waitForNetworkIdle` timeout, once on CI, said neither).
 */
export function trackRequests(page: Page): { settle(idleMs?: number, timeoutMs?: number): Promise<void> } {
  const open = new Map<unknown, string>();
  page.on('request', (r) => open.set(r, `${r.method()} ${r.url()}`));
  for (const done of ['requestfinished', 'requestfailed'] as const) page.on(done, (r) => open.delete(r));
  return {
    async settle(idleMs = 100, timeoutMs = 60_000) {
      try {
        await page.waitForNetworkIdle({ idleTime: idleMs, timeout: timeoutMs });
      } catch (e) {
        const still = [...open.values()].join(', ') || 'none tracked';
        throw new Error(`${page.url()}: the network did not settle in ${timeoutMs} ms; open: ${still}`, { cause: e });
      }
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

let axeSource: string | undefined;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core in the page. Evaluated over the DevTools protocol, so it needs no inline <script> and the page's
 * CSP stays as served. Returns the serious and critical violations.
 */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  const all = (await page.evaluate(`axe
    .run(document, { resultTypes: ['violations'] })
    .then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
    })))`)) as AxeViolation[];
  return all.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Waits for a selector and clicks it. */
export async function click(page: Page, selector: string): Promise<void> {
  const el = await page.waitForSelector(selector, { visible: true });
  await el!.click();
}

/** Clicks the first element matching `selector` whose text contains `text`. */
export async function clickText(page: Page, selector: string, text: string): Promise<void> {
  const el = await page.waitForSelector(
    `::-p-xpath(//${selector}[contains(normalize-space(.), ${JSON.stringify(text)})])`,
    {
      visible: true,
    },
  );
  await el!.click();
}

/** Types into the input labelled by `label` (via its id, as the portal's Field renders it). */
export async function fill(page: Page, name: string, value: string): Promise<void> {
  const el = await page.waitForSelector(`#f-${name}`, { visible: true });
  await el!.click({ count: 3 });
  await el!.type(value);
}

export async function textOf(page: Page, selector: string): Promise<string> {
  const el = await page.waitForSelector(selector, { visible: true });
  return (await el!.evaluate((e) => e.textContent ?? '')).trim();
}
