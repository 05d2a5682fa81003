import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { markSessionFailedToStart } from '../../shared/domains/realtime/sessions.ts';
import { upsertTurn, type TurnRow } from '../../shared/domains/realtime/session-trace.ts';
import { verifyWebhook } from '../../shared/domains/webhooks/standard-webhooks.ts';
import { devOtp } from '../../support/helpers/portal.ts';
import { startTestPlatform, waitUntil, type TestPlatform } from '../../support/helpers/platform.ts';
import {
  checkPrerequisites,
  click,
  clickText,
  fill,
  launchChromium,
  screenshot,
  seriousA11yViolations,
  textOf,
  trackRequests,
} from '../../support/portal/browser.ts';

/**
 * The portal guides instead of failing (issue 23), each checked in Debian's chromium against the real platform
 * (api role, no vendor key, no Stripe): the login page names the development code sink, a reload keeps the
 * sign-up's name step, phone and form errors are sentences, the agent form says which engines the keys allow,
 * Calls lists a session that failed at start with its reason and has an empty state that is not a filter's,
 * collections list their documents, billing says why its buttons are off, webhook endpoints are added, tested
 * (a signed event to a local receiver) and removed, page views leave the API key's rate limit alone, the 390 px
 * layout has no band under the navigation and no page-wide sideways scroll, and Back after sign-out shows the
 * login page. One browser for all of it; the newcomer's voice path is test/portal/e2e.test.ts.
 */
let p: TestPlatform;
let browser: Browser;
let page: Page;
let receiver: Server;
let receiverUrl = '';
const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
const phone = `+14155551${100 + Math.floor(Math.random() * 800)}`;

async function visit(path: string, ready: string): Promise<void> {
  await page.goto(`${p.url}/portal${path}`, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector(ready, { visible: true }).catch((e: Error) => {
    throw new Error(`${path}: no ${ready} (the page is at ${page.url()}): ${e.message}`, { cause: e });
  });
}

/** A same-origin call through the signed-in browser session (cookie and CSRF token as the portal sends them). */
async function portalFetch<T>(path: string, method = 'GET', json?: unknown): Promise<{ status: number; body: T }> {
  return page.evaluate(
    async (url, m, body) => {
      const s = (await (await fetch('/portal/api/auth/session')).json()) as { csrfToken: string };
      const r = await fetch(url, {
        method: m,
        headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: r.status, body: r.status === 204 ? null : await r.json() };
    },
    path,
    method,
    json,
  ) as Promise<{ status: number; body: T }>;
}

/** A stored turn of a call's trace, as the realtime role writes it (timings left out). */
function turnRow(idx: number, speaker: TurnRow['speaker'], text: string, startMs: number, endMs: number): TurnRow {
  const none = { stt_ms: null, llm_ms: null, tts_ms: null, latency_ms: null, endpoint_ms: null, overhead_ms: null };
  return {
    ...none,
    idx,
    speaker,
    text,
    full_text: null,
    start_ms: startMs,
    end_ms: endMs,
    interrupted: false,
    error: null,
    suspected_cut_in: false,
  };
}

/** Screenshot, and no serious or critical axe-core violation on what the page shows now. */
async function look(name: string): Promise<void> {
  await screenshot(page, name);
  const bad = await seriousA11yViolations(page);
  expect(bad, `${name}: ${JSON.stringify(bad, null, 1)}`).toEqual([]);
}

const waitText = (text: string) => page.waitForSelector(`::-p-text(${text})`, { visible: true });

beforeAll(async () => {
  checkPrerequisites();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  p = await startTestPlatform({ roles: ['api'], env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  browser = await launchChromium();
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
}, 120_000);

afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail' && page) {
    await screenshot(page, `guides-failed-${ctx.task.name.replace(/\W+/g, '-').slice(0, 40)}`).catch(() => {});
  }
});

afterAll(async () => {
  await browser?.close();
  await p?.close();
  await new Promise((r) => receiver?.close(r));
});

describe('the portal guides instead of failing (chromium)', () => {
  it('login: names the development sink, explains a bad number, keeps the name step across a reload', async () => {
    await visit('/login', '#f-phone');
    const sink = await textOf(page, '[data-testid=dev-sink]');
    expect(sink).toContain('no SMS is sent');
    expect(sink).toContain('npm run cli -- portal code --phone');

    await fill(page, 'phone', '+1 555 0100');
    await click(page, 'button[type=submit]');
    const err = await textOf(page, '#f-phone-err');
    expect(err).toContain('too short for country code +1');
    expect(err).toContain('7 digits');
    expect(err).toContain('E.164');
    expect(err).toMatch(/\+1 \d{3} \d{3} \d{4}/);

    await fill(page, 'phone', phone);
    await click(page, 'button[type=submit]');
    await page.waitForSelector('#f-code', { visible: true });
    // The notice now names the number typed, ready to paste.
    expect(await textOf(page, '[data-testid=dev-sink] code')).toBe(`npm run cli -- portal code --phone ${phone}`);
    const code = await waitUntil(() => devOtp(p, phone));
    await fill(page, 'code', code);
    await click(page, 'button[type=submit]');
    await page.waitForSelector('#f-name', { visible: true });

    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#f-name', { visible: true });
    expect(await page.$('#f-phone')).toBeNull();
    expect(await textOf(page, '.login form p')).toContain(phone);
    await fill(page, 'name', 'Grace Guide');
    await click(page, 'button[type=submit]');
    await waitText('Credits used');
  });

  it('agent form: engines labelled by the keys present, errors written for people', async () => {
    await visit('/agents', '::-p-text(New agent)');
    await clickText(page, 'button', 'New agent');
    await page.waitForSelector('#f-ttsProvider-hint', { visible: true });
    expect(await textOf(page, '#f-llmProvider-hint')).toContain('Needs no key');
    expect(await textOf(page, '#f-ttsProvider-hint')).toBe('Usable: runs on this server, needs no key.');
    const options = await page.$$eval('#f-ttsProvider option', (os) => os.map((o) => o.textContent));
    expect(options).toContain('elevenlabs (no key)');
    const llms = await page.$$eval('#f-llmProvider option', (os) => os.map((o) => o.textContent));
    expect(llms.some((o) => o?.includes('(no key)'))).toBe(true);
    await page.select('#f-ttsProvider', 'elevenlabs');
    expect(await textOf(page, '#f-ttsProvider-hint')).toContain('No key: add one under Provider keys');
    await page.select('#f-ttsProvider', 'default');
    // A stored key makes the engine usable, and the list says whose key it is before anything is saved.
    const stored = await portalFetch('/portal/api/v1/provider-keys', 'POST', {
      provider: 'elevenlabs',
      apiKey: 'sk_guides_test_0123456789',
    });
    expect(stored.status).toBe(201);
    await clickText(page, 'button', 'Cancel');
    await clickText(page, 'button', 'New agent');
    await page.waitForFunction(
      `[...document.querySelectorAll('#f-ttsProvider option')].some((o) => o.textContent === 'elevenlabs (your key)')`,
    );
    await page.select('#f-ttsProvider', 'elevenlabs');
    expect(await textOf(page, '#f-ttsProvider-hint')).toBe('Usable: your stored key is used.');
    await page.select('#f-ttsProvider', 'default');

    await fill(page, 'name', 'Scratch');
    await fill(page, 'temperature', '7');
    await clickText(page, 'button', 'Create agent');
    expect(await textOf(page, '#f-temperature-err')).toBe('Temperature must be between 0 and 2');
    await fill(page, 'temperature', '0.5');
    await fill(page, 'maxTokens', '0');
    await clickText(page, 'button', 'Create agent');
    expect(await textOf(page, '#f-maxTokens-err')).toBe('Max tokens must be between 1 and 16384');
    await clickText(page, 'button', 'Cancel');
  });

  it('calls: an empty state that is not a filter, and a session that failed at start listed with its reason', async () => {
    await visit('/calls', 'h1');
    await waitText('No calls yet.');
    expect(await textOf(page, 'main')).not.toContain('match');
    await page.select('#f-kind', 'campaign');
    await waitText('No calls match these filters.');
    await clickText(page, 'button', 'Clear the filters');
    await waitText('No calls yet.');

    // An agent, then a real token (a pending session) whose start fails: the record the realtime
    // worker writes when a session cannot start (workers/realtime/direct/session-handler.ts).
    const made = await portalFetch<{ id: string }>('/portal/api/v1/agents', 'POST', {
      name: 'Front desk',
      firstMessage: 'Hello, how can I help?',
    });
    expect(made.status).toBe(201);
    const minted = await portalFetch<{ sessionId: string }>('/portal/api/v1/sessions/direct', 'POST', {
      agentId: made.body.id,
    });
    expect(minted.status).toBe(200);
    await markSessionFailedToStart(p.infra.db, minted.body.sessionId, 'start-failed', 'the voice engine did not load');
    // And a call the per-call credit cap ended: completed, and the list says why in words, not "completed" alone.
    const capped = await portalFetch<{ sessionId: string }>('/portal/api/v1/sessions/direct', 'POST', {
      agentId: made.body.id,
    });
    await p.infra.db.query(
      `update rt_sessions set status = 'completed', end_reason = 'max-credits', started_at = now() - interval '1 minute',
         ended_at = now() where id = $1`,
      [capped.body.sessionId],
    );

    await visit('/calls', 'table.calls');
    expect(await textOf(page, 'table.calls .reason')).toBe('Could not start: the voice engine did not load');
    expect(await textOf(page, 'table.calls [data-testid=end-reason]')).toBe('Ended at the call’s credit cap');
    // A call a cap ended is never shown as "completed" (issue 34), and the list filters by how calls ended.
    const capRow = `tr[data-session="${capped.body.sessionId}"]`;
    expect(await textOf(page, `${capRow} [data-testid=state]`)).toBe('stopped at a limit');
    expect(await textOf(page, `${capRow} [data-testid=kind]`)).toBe('Browser call');
    await page.select('#f-endReason', 'max-credits');
    await page.waitForFunction("document.querySelectorAll('table.calls tbody tr').length === 1");
    await look('guides-calls-failed');
    // The agent's own page says it too, under its recent calls.
    await visit(`/agents/${encodeURIComponent(made.body.id)}`, '::-p-text(Recent calls)');
    await waitText('Could not start: the voice engine did not load');

    // A caller turn with no words (the VAD heard speech, the recogniser nothing) is said so, not shown as silence.
    const id = capped.body.sessionId;
    await upsertTurn(p.infra.db, id, turnRow(0, 'assistant', 'Hello, how can I help?', 0, 1800));
    await upsertTurn(p.infra.db, id, turnRow(1, 'user', '', 2500, 3400));
    await visit(`/calls/${encodeURIComponent(id)}`, 'ol.transcript');
    expect(await textOf(page, 'ol.transcript li.you em')).toBe('(speech heard, no words recognised)');
    expect(await textOf(page, 'ol.transcript li.agent')).toContain('Hello, how can I help?');
  });

  it('collections list their documents; billing says why its buttons are disabled', async () => {
    await visit('/collections', '#f-name');
    await fill(page, 'name', 'Menu');
    await click(page, 'form.inline-form button[type=submit]');
    await waitText('No documents yet');
    await fill(page, 'content', 'Soup of the day is tomato. Bread is baked every morning.');
    await clickText(page, 'button', 'Add text');
    await page.waitForSelector('table.documents tbody tr', { visible: true });
    expect(await textOf(page, 'table.documents tbody th')).toBe('pasted text');
    await look('guides-collection-documents');
    await click(page, 'table.documents button.danger-outline');
    await clickText(page, 'button', 'Delete this document');
    await waitText('No documents yet');

    await visit('/billing', '::-p-text(Change plan)');
    await waitText('Stripe is not configured');
    const buttons = await page.$$eval('button', (bs) =>
      bs
        .filter((b) => /Switch to|Stripe customer portal/.test(b.textContent ?? ''))
        .map((b) => ({ disabled: b.disabled, why: b.getAttribute('aria-describedby') })),
    );
    expect(buttons.length).toBeGreaterThanOrEqual(3);
    for (const b of buttons) expect(b).toEqual({ disabled: true, why: 'billing-why' });
    expect(await textOf(page, '#billing-why')).toContain('Stripe is not configured');
    await look('guides-billing');
  });

  it('webhooks: an endpoint is added, sent a signed test event, and removed', async () => {
    await visit('/webhooks', '#f-url');
    await fill(page, 'url', receiverUrl);
    await clickText(page, 'button', 'Add endpoint');
    await page.waitForSelector(`::-p-text(${receiverUrl})`, { visible: true });
    await clickText(page, 'button', 'Send test event');
    await waitText('Test event delivered: the endpoint answered 200.');
    await look('guides-webhooks');
    expect(received).toHaveLength(1);
    const { headers, body } = received[0]!;
    expect(JSON.parse(body)).toMatchObject({ type: 'webhook.test' });
    const overview = await portalFetch<{ endpoints: Array<{ url: string; signingSecret: string }> }>(
      '/portal/api/webhooks?reveal=1',
    );
    const secret = overview.body.endpoints.find((e) => e.url === receiverUrl)!.signingSecret;
    const sig = {
      id: String(headers['webhook-id']),
      timestamp: String(headers['webhook-timestamp']),
      signature: String(headers['webhook-signature']),
    };
    expect(verifyWebhook(secret, sig, body)).toBe(true);
    expect(verifyWebhook(`whsec_${Buffer.alloc(24).toString('base64')}`, sig, body)).toBe(false);
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.waitForSelector('::-p-text(webhook.test)', { visible: true });

    await clickText(page, 'button', 'Remove');
    await clickText(page, 'button', 'Remove it and its delivery log');
    await waitText('No endpoints yet');
    // A private address is refused when it is added, not when a delivery fails later.
    await fill(page, 'url', 'http://10.0.0.1/hooks');
    await clickText(page, 'button', 'Add endpoint');
    expect(await textOf(page, '#f-url-err')).toMatch(/private/);
  });

  it("page views do not spend the API key's rate limit", async () => {
    const key = await portalFetch<{ key: string }>('/portal/api/v1/keys', 'POST', { name: 'limits' });
    const read = async () => {
      const sent = Date.now();
      const r = await p.request('/v1/me', { key: key.body.key });
      // The limiter's windows are fixed (so many requests a wall-clock window): which one this request counted in,
      // NaN when a window turned while it was on its way (then it could be either).
      const windowMs = Number(/w=(\d+)/.exec(r.headers.get('ratelimit-policy') ?? '')![1]) * 1000;
      const [from, to] = [Math.floor(sent / windowMs), Math.floor(Date.now() / windowMs)];
      return { remaining: Number(r.headers.get('x-ratelimit-remaining')), window: from === to ? from : NaN };
    };
    // Measured within one window: when a window turns between the two reads, its count starts again (a test that
    // straddled a minute's turn read one more than it spent, CI 2026-11-29), so the pages are visited again.
    const requests = trackRequests(page);
    let spent: number | null = null;
    for (let attempt = 0; attempt < 3 && spent === null; attempt++) {
      const before = await read();
      for (const path of ['/', '/agents', '/calls', '/collections', '/webhooks', '/billing', '/keys']) {
        await visit(path, 'main h1');
        await requests.settle();
      }
      const after = await read();
      if (after.window === before.window) spent = before.remaining - after.remaining;
    }
    // Only the second read itself: the page views spent nothing of the key's limit.
    expect(spent).toBe(1);
    // The portal's reads have a bucket of their own, well above the tier's API limit.
    const h = await page.evaluate(async () => (await fetch('/portal/api/v1/agents')).headers.get('x-ratelimit-limit'));
    expect(Number(h)).toBeGreaterThanOrEqual(1200);
  });

  it('390 px: no blank band under the navigation, tables scroll inside their box', async () => {
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
    await visit('/agents', 'table');
    const agentHref = await page.$eval('main table a', (a) => a.getAttribute('href') ?? '');
    const withTable = new Set(['/calls', '/keys', '/agents']);
    for (const path of [...withTable, '/', '/webhooks', '/billing', '/collections', agentHref.replace('/portal', '')]) {
      await visit(path, 'main h1');
      if (withTable.has(path)) await page.waitForSelector('table', { visible: true });
      // Laid out once nothing on the page is still loading.
      await page.waitForFunction(
        `![...document.querySelectorAll('main [role=status]')].some((e) => e.textContent.startsWith('Loading'))`,
      );
      // Measured in the page (a string: this file is compiled without the DOM's types).
      const m = (await page.evaluate(`(() => {
        const nav = document.querySelector('.sidenav').getBoundingClientRect();
        const main = document.querySelector('main').getBoundingClientRect();
        const tables = [...document.querySelectorAll('main table')].map((t) => t.getBoundingClientRect().right);
        return { gap: main.top - nav.bottom, pageWidth: document.documentElement.scrollWidth,
                 tablesRight: Math.max(0, ...tables) };
      })()`)) as { gap: number; pageWidth: number; tablesRight: number };
      expect(m.gap, path).toBeLessThanOrEqual(1);
      expect(m.pageWidth, path).toBeLessThanOrEqual(390);
      expect(m.tablesRight, path).toBeLessThanOrEqual(390);
      await look(`guides-mobile${path.replace(/\//g, '-').slice(0, 20) || '-overview'}`);
    }
    await page.setViewport({ width: 1280, height: 900 });
  });

  it('Back after sign-out shows the login page, not the cached account page', async () => {
    const res = await page.goto(`${p.url}/portal/keys`, { waitUntil: 'domcontentloaded' });
    expect(res?.headers()['cache-control']).toBe('no-store');
    await waitText('limits');
    await visit('/calls', 'table.calls');
    await clickText(page, 'button', 'Sign out');
    await page.waitForSelector('#f-phone', { visible: true });
    await page.goBack({ waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#f-phone', { visible: true });
    expect(new URL(page.url()).pathname).toBe('/portal/login');
    expect(await page.$('table.calls')).toBeNull();
    expect(await page.content()).not.toContain('limits');
  });
});
