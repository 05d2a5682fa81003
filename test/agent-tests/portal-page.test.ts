import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PortalBrowser } from '../../support/helpers/portal.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';
import {
  checkPrerequisites,
  clickText,
  launchChromium,
  screenshot,
  seriousA11yViolations,
  watchCsp,
} from '../../support/portal/browser.ts';
import { FRONT_DESK_SUITE } from './fixtures.ts';

/**
 * The agent's Tests page in Debian's chromium against the real platform, offline: the developer pastes a scenario
 * file and runs it; the page follows the run's progress and shows each scenario's verdict with the reason, the
 * call's recording and its latency waterfall.
 */
let p: TestPlatform;
let browser: Browser;
let page: Page;
let csp: string[];
let agentId = '';

beforeAll(async () => {
  checkPrerequisites();
  p = await startTestPlatform({
    roles: ['api', 'realtime', 'cpu'],
    env: { REALTIME_SESSION_SECRET: 'portal-tests-secret-portal-tests-secret-01', AGENT_TESTS_MAX_PARALLEL: '1' },
  });
  const b = new PortalBrowser(p);
  await b.signIn(`+14155551${100 + Math.floor(Math.random() * 800)}`, 'Tess Ter');
  const created = await b.fetch('/portal/api/v1/agents', {
    method: 'POST',
    json: {
      name: 'Front desk',
      systemPrompt: 'You answer the phone for a dental practice.',
      firstMessage: 'Hello, thanks for calling.',
    },
  });
  expect(created.status).toBe(201);
  agentId = ((await created.json()) as { id: string }).id;
  browser = await launchChromium();
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  csp = watchCsp(page);
  await browser.setCookie({ name: 'vap_portal', value: b.cookie!, domain: new URL(p.url).hostname, path: '/' });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await p?.close();
});

/** Puts a whole file into the scenarios box, as pasting does (Preact listens for the input event). */
async function setScenarios(text: string): Promise<void> {
  await page.$eval(
    '#f-scenarios',
    (e, t) => {
      (e as unknown as { value: string }).value = t;
      e.dispatchEvent(new Event('input', { bubbles: true }));
    },
    text,
  );
}

describe("the agent's Tests page", () => {
  it('runs a pasted scenario file and shows each verdict with its reason, recording and waterfall', async () => {
    await page.goto(`${p.url}/portal/agents/${encodeURIComponent(agentId)}/tests`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#f-scenarios', { visible: true });
    expect(await page.$eval('#f-scenarios', (e) => (e as unknown as { value: string }).value)).toContain('scenarios:');
    await setScenarios(FRONT_DESK_SUITE);
    // A bad file is refused with the field's error, before any call.
    await setScenarios('name: x');
    await clickText(page, 'button', 'Run these scenarios');
    await page.waitForSelector('#f-scenarios-err', { visible: true });
    expect(await page.$eval('#f-scenarios-err', (e) => e.textContent)).toMatch(/turns/i);
    await setScenarios(FRONT_DESK_SUITE);
    await clickText(page, 'button', 'Run these scenarios');
    await page.waitForFunction(`new URLSearchParams(location.search).has('run')`);
    // The page polls the run while it is open: both results appear without a reload.
    await page.waitForFunction(`document.querySelectorAll('[data-testid=scenario-result]').length === 2`, {
      timeout: 180_000,
    });
    const results = await page.$$eval('[data-testid=scenario-result]', (els) => els.map((e) => e.textContent ?? ''));
    expect(results[0]).toMatch(/PASS.*asks for Saturday hours/);
    expect(results[1]).toMatch(/FAIL.*never talks about prices/);
    expect(results[1]).toContain('expect.replyNeverMatches (?i)price: the agent said "price"');
    // The failed scenario is open: its recording (both legs) and its waterfall.
    const src = await page.$eval('audio.recording', (e) => e.getAttribute('src'));
    expect(src).toMatch(/^\/portal\/api\/recordings\/.+\/audio$/);
    const audio = await page.evaluate(async (u) => (await fetch(u!, { credentials: 'same-origin' })).status, src);
    expect(audio).toBe(200);
    await page.waitForSelector('figure.waterfall', { visible: true });
    await page.waitForSelector('::-p-text(1 passed, 1 failed)', { visible: true });
    await screenshot(page, 'agent-tests');
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(csp).toEqual([]);
  }, 240_000);

  it("keeps the agent's last suite across a reload, and its text matches the agent's mode", async () => {
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#f-scenarios', { visible: true });
    expect(await page.$eval('#f-scenarios', (e) => (e as unknown as { value: string }).value)).toBe(FRONT_DESK_SUITE);
    // No LLM is configured: the agent answers with the local reply engine, so nothing runs at a vendor's cost.
    await page.waitForFunction(
      "document.querySelector('[data-testid=tests-intro]')?.textContent.includes('local reply engine')",
    );
    expect(await page.$eval('[data-testid=tests-intro]', (e) => e.textContent)).not.toContain('real cost');
  }, 60_000);
});
