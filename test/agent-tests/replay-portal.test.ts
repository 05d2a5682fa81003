import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeepgramLiveDouble } from '../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { PortalBrowser } from '../../support/helpers/portal.ts';
import type { TestPlatform } from '../../support/helpers/platform.ts';
import {
  checkPrerequisites,
  clickText,
  launchChromium,
  screenshot,
  seriousA11yViolations,
  watchCsp,
} from '../../support/portal/browser.ts';
import { FIRST_V1, FIRST_V2, FRONT_DESK, QUESTION, recordedPhoneCall, replayPlatform } from './replay-fixtures.ts';

/**
 * "Replay this call" on the call page, in Debian's chromium against the real platform: a recorded call of the
 * front desk, its greeting changed since, replayed from the page; the page follows the replay and shows the diff.
 */
let p: TestPlatform;
let dg: DeepgramLiveDouble;
let browser: Browser;
let page: Page;
let csp: string[];
let sessionId = '';

beforeAll(async () => {
  checkPrerequisites();
  ({ p, dg } = await replayPlatform());
  const b = new PortalBrowser(p);
  const developerId = await b.signIn(`+14155552${100 + Math.floor(Math.random() * 800)}`, 'Rita Play');
  const created = await b.fetch('/portal/api/v1/agents/provision', { method: 'POST', json: FRONT_DESK });
  expect(created.status, await created.clone().text()).toBe(201);
  const agentId = ((await created.json()) as { agent: { id: string } }).agent.id;
  // The call itself comes over the phone path, which takes an API key (Twilio's webhook holds none of the portal's).
  const key = await mintKey(p.infra.db, developerId, 'phone');
  ({ sessionId } = await recordedPhoneCall(p, key.key, agentId));
  const put = await b.fetch(`/portal/api/v1/agents/${agentId}`, { method: 'PUT', json: { firstMessage: FIRST_V2 } });
  expect(put.status).toBe(200);
  browser = await launchChromium();
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  csp = watchCsp(page);
  await browser.setCookie({ name: 'vap_portal', value: b.cookie!, domain: new URL(p.url).hostname, path: '/' });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await p?.close();
  await dg?.close();
});

describe('Replay this call', () => {
  it('replays the call from its page and shows what the agent said then and now', async () => {
    await page.goto(`${p.url}/portal/calls/${encodeURIComponent(sessionId)}`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('::-p-text(The call ran version 1.)', { visible: true });
    await clickText(page, 'button', 'Replay this call');
    // The panel polls the replay while it runs: the diff appears without a reload.
    await page.waitForFunction(
      `document.querySelector('[data-testid=call-replay] .badge')?.textContent === 'completed'`,
      { timeout: 90_000 },
    );
    const text = await page.$eval('[data-testid=call-replay]', (e) => e.textContent ?? '');
    expect(text).toMatch(/version 1 then,\s*2 now/);
    expect(text).toContain('1 of 1 caller turns played');
    expect(text).toMatch(/STT: simulated/);
    const rows = await page.$$eval('[data-testid=call-replay] tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent ?? '')),
    );
    expect(rows[0]![0]).toMatch(/Greeting.*changed/);
    expect(rows[0]!.slice(2, 4)).toEqual([FIRST_V1, FIRST_V2]);
    expect(rows[1]![1]).toBe(QUESTION);
    expect(rows[1]![2]).toBe(rows[1]![3]);
    // The replay is a call of its own, one click away (its recording, waterfall and transcript).
    const href = await page.$eval('[data-testid=call-replay] a', (a) => a.getAttribute('href'));
    expect(href).toMatch(/^\/portal\/calls\/ses_/);
    await screenshot(page, 'call-replay');
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(csp).toEqual([]);

    // Back on the page later, the latest replay is there.
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.waitForSelector('[data-testid=call-replay]', { visible: true });
    expect(await page.$eval('[data-testid=call-replay] .badge', (e) => e.textContent)).toBe('completed');
  }, 180_000);
});
