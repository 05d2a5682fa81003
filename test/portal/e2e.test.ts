import type { Browser, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { devOtp } from '../helpers/portal.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform.ts';
import { DirectClient } from '../realtime/direct-client.ts';
import { startOpenAiChatDouble, type OpenAiChatDouble } from '../doubles/openai-chat.ts';
import { fliteUtterance, wsUrl } from '../realtime/helpers.ts';
import {
  checkPrerequisites,
  click,
  clickText,
  fill,
  launchChromium,
  screenshot,
  seriousA11yViolations,
  textOf,
  watchCsp,
} from './browser.ts';

/**
 * The portal in Debian's chromium against the real platform: sign-up through the development code sink, a key
 * shown once, an agent, a direct voice call held over the real WebSocket, that call's waterfall and recording,
 * every page screenshotted (.artifacts/portal/) and checked with axe-core, then sign-out.
 */
let p: TestPlatform;
let llm: OpenAiChatDouble;
let browser: Browser;
let page: Page;
let csp: string[];
let agentId = '';
let sessionId = '';
const phone = `+14155550${100 + Math.floor(Math.random() * 100)}`;

/** GET through the browser's own session (same cookie, same origin) and parse JSON. */
async function browserGet<T>(path: string): Promise<{ status: number; body: T }> {
  return page.evaluate(async (url) => {
    const r = await fetch(url, { credentials: 'same-origin' });
    return { status: r.status, body: r.headers.get('content-type')?.includes('json') ? await r.json() : null };
  }, path) as Promise<{ status: number; body: T }>;
}

async function visit(path: string, ready: string): Promise<void> {
  await page.goto(`${p.url}/portal${path}`, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector(ready, { visible: true });
}

/** Screenshot plus accessibility check for the page on screen. */
async function checkPage(name: string): Promise<void> {
  await screenshot(page, name);
  const bad = await seriousA11yViolations(page);
  expect(bad, `${name}: ${JSON.stringify(bad, null, 1)}`).toEqual([]);
}

beforeAll(async () => {
  checkPrerequisites();
  llm = await startOpenAiChatDouble(() => ({ text: 'We open at nine tomorrow.' }));
  p = await startTestPlatform({
    env: {
      REALTIME_SESSION_SECRET: 'portal-e2e-secret-portal-e2e-secret-0123',
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: llm.key,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
    },
  });
  browser = await launchChromium();
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  csp = watchCsp(page);
}, 120_000);

// A failing step leaves a picture of what the browser showed.
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail' && page) {
    await screenshot(page, `failed-${ctx.task.name.replace(/\W+/g, '-').slice(0, 40)}`).catch(() => {});
  }
});

afterAll(async () => {
  await browser?.close();
  await p?.close();
  await llm?.close();
});

describe('developer portal in chromium', () => {
  it('signs up with a phone through the development sink and names the account', async () => {
    await visit('/', '#f-phone');
    expect(new URL(page.url()).pathname).toBe('/portal/login');
    await checkPage('login');
    await fill(page, 'phone', 'not a phone');
    await click(page, 'button[type=submit]');
    expect(await textOf(page, '#f-phone-err')).toMatch(/phone/i);
    await fill(page, 'phone', phone);
    await click(page, 'button[type=submit]');
    await page.waitForSelector('#f-code', { visible: true });
    const code = await waitUntil(() => devOtp(p, phone));
    await fill(page, 'code', code);
    await click(page, 'button[type=submit]');
    await page.waitForSelector('#f-name', { visible: true });
    await checkPage('login-name');
    await fill(page, 'name', 'Ada Test');
    await click(page, 'button[type=submit]');
    await page.waitForSelector('::-p-text(Credits used)', { visible: true });
    expect(await textOf(page, '.who')).toContain('Ada Test');
    await page.waitForSelector('.chart canvas');
    await checkPage('overview');
  });

  it('creates an API key and shows it once', async () => {
    await visit('/keys', '#f-name');
    await fill(page, 'name', 'CI server');
    await click(page, 'form.inline-form button[type=submit]');
    const raw = await textOf(page, '[data-testid=raw-key]');
    expect(raw).toMatch(/^vap_/);
    await checkPage('keys-created');
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.waitForSelector('::-p-text(CI server)', { visible: true });
    expect(await page.$('[data-testid=raw-key]')).toBeNull();
    expect(await page.content()).not.toContain(raw);
    // The key works on /v1 with a Bearer header (the portal session is not an API key, and vice versa).
    expect((await p.request('/v1/agents', { key: raw })).status).toBe(200);
  });

  it('creates an agent (inline validation errors from the API) and talks to it through the fake microphone', async () => {
    await visit('/agents', '::-p-text(New agent)');
    await clickText(page, 'button', 'New agent');
    await fill(page, 'name', 'Front desk');
    await fill(page, 'firstMessage', 'Hello, how can I help?');
    await fill(page, 'llmModel', 'gpt-4o-mini');
    await fill(page, 'temperature', '7');
    await clickText(page, 'button', 'Create agent');
    expect(await textOf(page, '#f-temperature-err')).not.toBe('');
    await checkPage('agent-invalid');
    await fill(page, 'temperature', '0.5');
    await clickText(page, 'button', 'Create agent');
    await page.waitForSelector('::-p-text(Talk to it)', { visible: true });
    agentId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    expect(agentId).not.toBe('');
    await checkPage('agent');
    // "Talk to it": a token minted from the session, the microphone worklet (a same-origin file, as the CSP
    // requires) and the direct WebSocket, with chromium's fake microphone.
    await clickText(page, 'button', 'Start talking');
    await page.waitForSelector('::-p-text(Connected: speak now.)', { visible: true });
    await page.waitForSelector('::-p-text(Open this call)', { visible: true });
    await clickText(page, 'button', 'Hang up');
    await page.waitForSelector('::-p-text(Call ended)', { visible: true });
  });

  it('holds a short direct voice session over the real WebSocket with a token minted by the portal', async () => {
    const minted = (await page.evaluate(async (id) => {
      const s = (await (await fetch('/portal/api/auth/session')).json()) as { csrfToken: string };
      const r = await fetch('/portal/api/v1/sessions/direct', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken },
        body: JSON.stringify({ agentId: id }),
      });
      return { status: r.status, body: (await r.json()) as { token: string; sessionId: string } };
    }, agentId)) as { status: number; body: { token: string; sessionId: string } };
    expect(minted.status).toBe(200);
    sessionId = minted.body.sessionId;
    const c = new DirectClient(
      wsUrl(p.url, `/v1/agents/${encodeURIComponent(agentId)}/session?token=${minted.body.token}&outputRate=24000`),
    );
    await c.opened;
    await waitUntil(() => c.events.some((e) => e.type === 'mark'), 30_000);
    await c.speak(await fliteUtterance('Hello, what time do you open tomorrow morning?', 16000));
    // Local STT on a loaded 2-core machine can take seconds: the waits are generous, never fixed sleeps.
    await waitUntil(() => c.events.some((e) => e.type === 'transcript' && e.final), 60_000);
    await waitUntil(
      () => c.events.some((e) => e.type === 'agent_done' && e.text === 'We open at nine tomorrow.'),
      60_000,
    );
    c.ws.send(JSON.stringify({ type: 'stop' }));
    await c.closed;
    await waitUntil(async () => {
      const r = await browserGet<{ status: string }>(`/portal/api/v1/observability/sessions/${sessionId}`);
      return r.body?.status === 'completed';
    }, 30_000);
  }, 180_000);

  it('opens the call: waterfall bars on one axis, root cause, transcript and a playable recording', async () => {
    await visit('/calls', 'table.calls');
    await checkPage('calls');
    await click(page, `a[href="/portal/calls/${encodeURIComponent(sessionId)}"]`);
    await page.waitForSelector('.wf-row[data-turn] .wf-bar', { visible: true });
    const stages = await page.$$eval('.wf-row[data-turn] .wf-bar', (els) =>
      els.map((e) => e.getAttribute('data-stage')),
    );
    expect(stages).toContain('llm');
    expect(stages).toContain('endpoint');
    await page.waitForSelector('::-p-text(We open at nine tomorrow.)', { visible: true });
    await page.waitForSelector('audio.recording');
    const audio = await page.waitForFunction(
      `(() => { const a = document.querySelector('audio.recording');
         return a && a.readyState >= 1 && a.duration > 0 ? { readyState: a.readyState, duration: a.duration, error: a.error } : null; })()`,
      { timeout: 20_000 },
    );
    const state = (await audio.jsonValue()) as { readyState: number; duration: number; error: unknown };
    expect(state.duration).toBeGreaterThan(1);
    expect(state.error).toBeNull();
    await checkPage('call');
  });

  it('renders the other pages without accessibility or CSP violations', async () => {
    await visit('/provider-keys', '#f-apiKey');
    await checkPage('provider-keys');
    await visit('/billing', '::-p-text(Change plan)');
    await clickText(page, 'button', 'Switch to pro');
    await page.waitForSelector('::-p-text(Stripe is not configured)', { visible: true });
    await checkPage('billing');
    await visit('/collections', '#f-name');
    await fill(page, 'name', 'Opening hours');
    await click(page, 'form.inline-form button[type=submit]');
    await page.waitForSelector('#f-content', { visible: true });
    await fill(page, 'content', 'The shop opens at nine in the morning and closes at six in the evening.');
    await clickText(page, 'button', 'Add text');
    await page.waitForSelector('::-p-text(chunks)', { visible: true });
    await fill(page, 'query', 'when does the shop open');
    await clickText(page, 'button', 'Search');
    const score = Number(await textOf(page, '.hits .score'));
    expect(score).toBeGreaterThan(0);
    expect(score).toBeLessThanOrEqual(1);
    await checkPage('collection');
    await visit('/video', 'h1');
    await page.waitForSelector('::-p-text(No video jobs yet.)', { visible: true });
    await checkPage('video');
    await visit('/webhooks', '::-p-text(Recent deliveries)');
    await checkPage('webhooks');
    expect(csp).toEqual([]);
  });

  it('signs out: the session ends server-side', async () => {
    await clickText(page, 'button', 'Sign out');
    await page.waitForSelector('#f-phone', { visible: true });
    expect((await browserGet('/portal/api/auth/session')).status).toBe(401);
    await visit('/calls', '#f-phone');
    expect(new URL(page.url()).pathname).toBe('/portal/login');
  });
});
