import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silence, tone } from '../../support/doubles/audio.ts';
import type { CalleeScript } from '../../support/doubles/twilio-voice.ts';
import { devOtp } from '../../support/helpers/portal.ts';
import { waitUntil } from '../../support/helpers/platform.ts';
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
} from '../../support/portal/browser.ts';
import { fliteUtterance } from '../../support/realtime/helpers.ts';
import { startCampaignHarness, type CampaignHarness } from '../campaigns/harness.ts';

/**
 * Issue 34's "done when", in one chromium session against the whole platform with Twilio, Deepgram and OpenAI at
 * their doubles: the outbound clinic agent built entirely in the portal (voicemail message, transfer number, call
 * tools, caps with the estimate beside them), a three-recipient campaign from a CSV (a bad file's rows listed
 * first, the estimate before starting), paused while its first call rings and resumed, then each outcome and end
 * reason read on the campaign page, the calls list and each call's page — at 1280 px and 390 px, axe clean. Every
 * wait is on a state (the page's text, the campaign's status), never a fixed sleep.
 */
const ANSWERS = '+15550300001';
const MACHINE = '+15550300002';
const BUSY = '+15550300003';
const VOICEMAIL = 'Hi {{first_name}}, this is the clinic about your visit. Please call us back.';
// The Analysis group as typed in the form, and what the OpenAI double answers the post-call analysis with: its verdict
// follows the transcript it is sent, so each call page shows the analysis of its own call.
const CRITERIA = 'The patient confirmed the appointment.';
const SCHEMA = { type: 'object', properties: { confirmed: { type: 'boolean' }, day: { type: 'string' } } };
const ANALYSED = 'You analyse a finished phone call';
function analysisOf(transcript: string) {
  return transcript.includes('about your visit')
    ? {
        summary: 'An answering machine took the clinic’s message for Dana.',
        structuredData: { confirmed: false },
        success: { success: false, reason: 'Nobody answered; a message was left.' },
      }
    : {
        summary: 'Ada confirmed her visit on Tuesday.',
        structuredData: { confirmed: true, day: 'Tuesday' },
        success: { success: true, reason: 'Ada said she can make it.' },
      };
}

let h: CampaignHarness;
let base = '';
let browser: Browser;
let page: Page;
let csp: string[];
let dir = '';
let campaignId = '';
let clinicId = '';
const phone = `+14155550${100 + Math.floor(Math.random() * 100)}`;

// The first call is held at the callee's answer until the test has paused the campaign: pause is checked while a
// call is in flight, and nothing else is dialled until resume.
let release: () => void = () => {};
const gate = new Promise<void>((r) => (release = r));

const person: CalleeScript = {
  answer: 'human',
  beforeConnect: () => gate,
  talk: async (c) => {
    await c.say(await fliteUtterance('Hello?'));
    await c.until(() => c.marksEchoed.length > 0 && !c.playing, 30_000);
    const marks = c.marksEchoed.length;
    await c.say(await fliteUtterance('Yes, I can make it.'));
    await c.until(() => c.marksEchoed.length > marks && !c.playing, 30_000);
  },
};
const machine: CalleeScript = {
  answer: 'machine',
  talk: async (c) => {
    await c.say(
      Buffer.concat([
        await fliteUtterance('Hi, you have reached Dana. Please leave a message after the tone.'),
        silence(8000, 0.4),
      ]),
    );
    await c.say(Buffer.concat([tone(8000, 0.5, 1000, 9000), silence(8000, 3)]));
    await c.closed;
  },
};

async function visit(path: string, ready: string): Promise<void> {
  await page.goto(`${base}/portal${path}`, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector(ready, { visible: true });
}

/** Waits until `selector`'s text contains `text` (the page polls the API on its own). */
async function waitText(selector: string, text: string, timeout = 120_000): Promise<void> {
  await page.waitForFunction(
    `[...document.querySelectorAll(${JSON.stringify(selector)})].some((e) => e.textContent.includes(${JSON.stringify(text)}))`,
    { timeout },
  );
}

/** Screenshot, axe, and at 390 px no sideways scroll of the page itself. */
async function checkPage(name: string): Promise<void> {
  await screenshot(page, name);
  const bad = await seriousA11yViolations(page);
  expect(bad, `${name}: ${JSON.stringify(bad, null, 1)}`).toEqual([]);
  const width = page.viewport()!.width;
  expect(await page.evaluate('document.documentElement.scrollWidth'), `${name} at ${width} px`).toBeLessThanOrEqual(
    width,
  );
}

async function atBothWidths(name: string, open: () => Promise<void>): Promise<void> {
  await open();
  await checkPage(`${name}-1280`);
  await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
  await open();
  await checkPage(`${name}-390`);
  // Leaving the mobile viewport reloads the page (puppeteer does, for isMobile): open it again before reading it.
  await page.setViewport({ width: 1280, height: 900 });
  await open();
}

/** Replaces an input's value (a number input's too: select-all then type). */
async function replace(name: string, value: string): Promise<void> {
  const el = await page.waitForSelector(`#f-${name}`, { visible: true });
  await el!.focus();
  await page.keyboard.down('Control');
  await page.keyboard.press('a');
  await page.keyboard.up('Control');
  await page.keyboard.press('Backspace');
  await el!.type(value);
}

async function upload(name: string, text: string): Promise<void> {
  const file = join(dir, name);
  await writeFile(file, text);
  // The file input, as puppeteer's upload needs it typed (the test's tsconfig has no DOM types).
  const input = (await page.waitForSelector('#f-recipients-file')) as unknown as {
    uploadFile(...paths: string[]): Promise<void>;
  };
  await input.uploadFile(file);
}

beforeAll(async () => {
  checkPrerequisites();
  h = await startCampaignHarness({
    accountSid: 'ACportale2e00000000000000000000000',
    authToken: 'twilio-auth-token-portal-e2e',
    script: (to) => (to === ANSWERS ? person : to === MACHINE ? machine : { answer: 'busy' }),
    heard: (u) => (u === 0 ? 'Hello?' : 'Yes, I can make it.'),
    reply: (body) => {
      const [system, user] = body.messages as { content: string }[];
      if (!system?.content.startsWith(ANALYSED)) return { text: 'Great, see you on Tuesday.' };
      return { text: JSON.stringify(analysisOf(user?.content ?? '')) };
    },
  });
  // The session cookie is Secure (the public URL is https): chromium keeps Secure cookies from http://localhost.
  base = h.p.url.replace('127.0.0.1', 'localhost');
  dir = await mkdtemp(join(tmpdir(), 'portal-campaign-'));
  browser = await launchChromium();
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  csp = watchCsp(page);
}, 120_000);

afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail' && page) {
    await screenshot(page, `campaign-failed-${ctx.task.name.replace(/\W+/g, '-').slice(0, 40)}`).catch(() => {});
  }
});

afterAll(async () => {
  release();
  await browser?.close();
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the outbound clinic in the portal', () => {
  it('signs up and builds the clinic agent in the form: voicemail, transfer, end call, caps', async () => {
    await visit('/', '#f-phone');
    await fill(page, 'phone', phone);
    await click(page, 'button[type=submit]');
    await page.waitForSelector('#f-code', { visible: true });
    await fill(page, 'code', await waitUntil(() => devOtp(h.p, phone)));
    await click(page, 'button[type=submit]');
    await page.waitForSelector('#f-name', { visible: true });
    await fill(page, 'name', 'Clinic Admin');
    await click(page, 'button[type=submit]');
    await page.waitForSelector('::-p-text(Credits used)', { visible: true });

    await visit('/agents', 'h1');
    await clickText(page, 'button', 'New agent');
    await fill(page, 'name', 'Clinic');
    await fill(page, 'systemPrompt', 'You confirm {{first_name}}’s appointment at the clinic.');
    await fill(page, 'firstMessage', 'Hello {{first_name}}, this is the clinic.');
    await page.waitForSelector('#f-llmProvider option[value=openai]');
    await page.select('#f-llmProvider', 'openai');
    await fill(page, 'llmModel', 'gpt-4o-mini');
    await page.select('#f-voicemail-action', 'leave_message');
    await fill(page, 'voicemail-message', VOICEMAIL);
    await click(page, 'input[name="callTools.endCall"]');
    await clickText(page, 'button', 'Add a transfer target');
    await fill(page, 'callTools-transferTargets-0-to', 'not a number');
    await fill(page, 'maxCredits', '400');
    await fill(page, 'maxDurationSeconds', '300');
    // The Analysis group appears once the API's schema (its OpenAPI document) has `analysis`.
    await click(page, 'input[name="analysis.summary"]');
    await fill(page, 'analysis-successCriteria', CRITERIA);
    // Not JSON: said under the box before anything is sent.
    await fill(page, 'analysis-structuredData', '{"type": "object",');
    await clickText(page, 'button', 'Create agent');
    expect(await textOf(page, '#f-analysis-structuredData-err')).toMatch(/JSON/);
    // JSON, but a schema that does not compile: the API refuses it once the transfer number is right (below).
    await replace('analysis-structuredData', '{"type": "object", "properties": {"day": {"type": "weekday"}}}');
    // The turn-taking choices come from the API's catalogue (its OpenAPI document).
    await page.waitForFunction(
      "[...document.querySelectorAll('#f-turnTaking-interruption option')].some((o) => o.value === 'vad-only')",
      { timeout: 60_000 },
    );
    await clickText(page, 'button', 'Create agent');
    // The API's error lands under the transfer target's number.
    expect(await textOf(page, '#f-callTools-transferTargets-0-to-err')).toMatch(/E\.164|sip/);
    await checkPage('clinic-agent-invalid');
    await fill(page, 'callTools-transferTargets-0-to', '+14155550199');
    await clickText(page, 'button', 'Create agent');
    expect(await textOf(page, '#f-analysis-structuredData-err')).toMatch(/schema/i);
    expect(await page.$('#f-callTools-transferTargets-0-to-err')).toBeNull();
    await checkPage('clinic-agent-invalid-schema');
    await replace('analysis-structuredData', JSON.stringify(SCHEMA));
    await clickText(page, 'button', 'Create agent');
    await page.waitForSelector('::-p-text(Talk to it)', { visible: true });
    const agentId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    clinicId = agentId;
    const saved = await page.evaluate(
      async (url) => {
        const r = await fetch(url, { credentials: 'same-origin' });
        return (await r.json()) as Record<string, unknown>;
      },
      `/portal/api/v1/agents/${encodeURIComponent(agentId)}`,
    );
    expect(saved).toMatchObject({
      name: 'Clinic',
      llmProvider: 'openai',
      voicemail: { action: 'leave_message', message: VOICEMAIL },
      callTools: { endCall: true, transferTargets: [{ name: 'front_desk', to: '+14155550199', mode: 'cold' }] },
      maxCredits: 400,
      maxDurationSeconds: 300,
      analysis: { summary: true, successCriteria: CRITERIA, structuredData: { schema: SCHEMA } },
    });
    // Reloaded, the form shows the analysis settings it saved.
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#f-analysis-structuredData', { visible: true });
    // (A string: the test's tsconfig has no DOM types.)
    const shown = await page.evaluate(`(() => {
      const q = (s) => document.querySelector(s);
      return {
        summary: q('input[name="analysis.summary"]').checked,
        criteria: q('#f-analysis-successCriteria').value,
        schema: JSON.parse(q('#f-analysis-structuredData').value),
      };
    })()`);
    expect(shown).toEqual({ summary: true, criteria: CRITERIA, schema: SCHEMA });
    // The saved agent's form shows what it has, and the caps' price beside them.
    expect(await page.$eval('#f-voicemail-message', (e) => (e as unknown as { value: string }).value)).toBe(VOICEMAIL);
    await waitText('[data-testid=limits-estimate]', 'credits');
    expect(await textOf(page, '[data-testid=limits-estimate]')).toMatch(
      /5-minute \(capped\).*credit cap of 400 lasts about [\d.]+ minutes?: it ends such a call first, at no more than 400 credits\./,
    );
    // The voice list is the deployment's, and "hear it" synthesizes a sample.
    await clickText(page, 'button', 'Hear it');
    await page.waitForFunction(
      "(() => { const a = document.querySelector('[data-testid=voice-sample]'); return a && a.readyState >= 1 && a.duration > 0.5; })()",
      { timeout: 60_000 },
    );
    await checkPage('clinic-agent-1280');
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
    await visit(`/agents/${encodeURIComponent(agentId)}`, '#f-voicemail-message');
    await checkPage('clinic-agent-390');
    await page.setViewport({ width: 1280, height: 900 });
  }, 240000);

  it('starts a three-recipient campaign from a CSV: row errors first, the estimate before starting', async () => {
    await visit('/campaigns', 'h1');
    await clickText(page, 'button', 'New campaign');
    await fill(page, 'name', 'Tuesday reminders');
    await fill(page, 'from', '+15550300000');
    // One attempt each (a busy line is not called again half an hour later), at any hour of the recipients' day.
    await replace('retry-maxAttempts', '1');
    expect(await page.$eval('#f-callingHours-end', (e) => (e as unknown as { value: string }).value)).toBe('24:00');
    await upload('bad.csv', `phone,first_name\n${ANSWERS},Ada\n555-0100,Bob\n${ANSWERS},Ada again\n`);
    await waitText('[data-testid=csv-check]', 'nothing is dialled');
    const check = await textOf(page, '[data-testid=csv-check]');
    expect(check).toContain('Line 3: "555-0100" is not a phone number in E.164 form');
    expect(check).toContain(`Line 4: ${ANSWERS} is already on line 2`);
    expect(await page.$('::-p-text(Estimate the cost)')).toBeNull();
    await checkPage('campaign-csv-errors');
    await upload(
      'clinic.csv',
      `phone,first_name,timeZone\n${ANSWERS},Ada,America/New_York\n${MACHINE},Dana,Europe/London\n${BUSY},Sam,\n`,
    );
    await waitText('[data-testid=csv-check]', '3 recipients, variables first_name');
    await clickText(page, 'button', 'Estimate the cost');
    await waitText('[data-testid=campaign-estimate]', 'credits for 3 answered calls');
    await checkPage('campaign-new');
    await clickText(page, 'button', 'Start the campaign');
    await page.waitForSelector('[data-testid=campaign-status]', { visible: true });
    campaignId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    expect(campaignId).toMatch(/^cmp_/);
  }, 240000);

  it('pauses while the first call rings, dials nothing more, and resumes to the end', async () => {
    await waitText('[data-testid=campaign-progress]', '1 calling');
    await clickText(page, 'button', 'Pause');
    await waitText('[data-testid=campaign-status]', 'paused');
    release();
    // The call in flight finishes; the paused campaign places no other.
    await waitText('[data-testid=campaign-progress]', '1 of 3 done, 0 calling', 180_000);
    expect(await textOf(page, '[data-testid=campaign-status]')).toBe('paused');
    expect(h.rest.calls.map((c) => c.get('To'))).toEqual([ANSWERS]);
    await clickText(page, 'button', 'Resume');
    await waitText('[data-testid=campaign-status]', 'completed', 240_000);
    expect(await textOf(page, '[data-testid=campaign-progress]')).toContain('3 of 3 done');
  }, 480000);

  it('reads each outcome and end reason on the campaign page, the calls list and each call page', async () => {
    const row = (phoneNo: string) => `::-p-xpath(//tr[th[normalize-space(.)="${phoneNo}"]])`;
    const rowText = async (phoneNo: string) =>
      (await (await page.waitForSelector(row(phoneNo)))!.evaluate((e) => e.textContent ?? '')).replace(/\s+/g, ' ');
    await atBothWidths('campaign-done', () =>
      visit(`/campaigns/${encodeURIComponent(campaignId)}`, 'table.recipients'),
    );
    expect(await rowText(ANSWERS)).toMatch(/Answered.*The caller hung up/);
    expect(await rowText(MACHINE)).toContain('Voicemail: message left');
    expect(await rowText(BUSY)).toContain('Busy');
    const outcomes = await textOf(page, '[aria-label=Outcomes]');
    for (const o of ['Answered: 1', 'Voicemail: message left: 1', 'Busy: 1']) expect(outcomes).toContain(o);

    // The calls list, filtered to campaign calls: both connected calls, labelled, ended in words, agent by name.
    await atBothWidths('calls-campaign', async () => {
      await visit('/calls', '#f-kind');
      await page.select('#f-kind', 'campaign');
      await page.waitForFunction("document.querySelectorAll('table.calls tbody tr').length === 2");
    });
    const rows = await page.$$eval('table.calls tbody tr', (trs) =>
      trs.map((tr) => ({
        id: tr.getAttribute('data-session') ?? '',
        text: (tr.textContent ?? '').replace(/\s+/g, ' '),
        end: tr.querySelector('[data-testid=end-reason]')?.textContent ?? '',
      })),
    );
    expect(rows.map((r) => r.end).sort()).toEqual(['The caller hung up', 'Voicemail: message left']);
    for (const r of rows) expect(r.text).toMatch(/Campaign call.*Clinic.*completed/);
    // Filtered by how they ended too (the API's endReason): the voicemail call alone.
    await page.select('#f-endReason', 'voicemail-left');
    await page.waitForFunction("document.querySelectorAll('table.calls tbody tr').length === 1");
    expect(await textOf(page, 'table.calls tbody tr [data-testid=end-reason]')).toBe('Voicemail: message left');

    // Each call's page: kind, agent by name, state and end reason; the transcript in time order.
    for (const r of rows) {
      await atBothWidths(`call-${r.end.startsWith('Voicemail') ? 'voicemail' : 'answered'}`, () =>
        visit(`/calls/${encodeURIComponent(r.id)}`, '[data-testid=end-reason]'),
      );
      expect(await textOf(page, '[data-testid=kind]')).toBe('Campaign call');
      await waitText('[data-testid=agent]', 'Clinic');
      expect(await textOf(page, '[data-testid=state]')).toBe('completed');
      expect(await textOf(page, '[data-testid=end-reason]')).toBe(r.end);
      const stamps = await page.$$eval('ol.transcript .ts', (els) => els.map((e) => e.textContent ?? ''));
      const times = stamps.map((t) => t.split(':').reduce((m: number, x: string) => m * 60 + Number(x), 0));
      expect(times.length).toBeGreaterThan(0);
      expect(times).toEqual([...times].sort((a, b) => a - b));
      if (r.end.startsWith('Voicemail')) await waitText('ol.transcript', 'this is the clinic about your visit');
      // The post-call analysis on the agent's LLM: the page reads the call again until it has arrived.
      const transcript = await textOf(page, 'ol.transcript');
      const want = analysisOf(transcript);
      await waitText('[data-testid=analysis-summary]', want.summary);
      expect(await textOf(page, '[data-testid=analysis-engine]')).toMatch(/^Analysed by OpenAI.*, model gpt-4o-mini$/);
      expect(await textOf(page, '[data-testid=analysis-success]')).toBe(
        `${want.success.success ? 'Successful' : 'Not successful'}: ${want.success.reason}`,
      );
      const data = await page.$$eval('[data-testid=analysis-data] div', (ds) =>
        ds.map((d) => `${d.querySelector('dt')?.textContent}=${d.querySelector('dd')?.textContent}`),
      );
      // (In the stored object's key order: Postgres jsonb does not keep the model's.)
      expect(data.sort()).toEqual(
        Object.entries(want.structuredData)
          .map(([k, v]) => `${k}=${String(v)}`)
          .sort(),
      );
      await checkPage(`call-${r.end.startsWith('Voicemail') ? 'voicemail' : 'answered'}-analysis`);
    }
    // The model was asked for what the form saved: the schema and the criteria typed in the portal.
    const asked = h.llm.requests
      .map((q) => (q.json as { messages: { content: string }[] }).messages[0]!.content)
      .filter((c) => c.startsWith(ANALYSED));
    expect(asked).toHaveLength(2);
    for (const a of asked) {
      // (Each property as typed; the stored schema's key order is Postgres jsonb's.)
      for (const [k, v] of Object.entries(SCHEMA.properties)) expect(a).toContain(`"${k}":${JSON.stringify(v)}`);
      expect(a).toContain(CRITERIA);
    }
  }, 300000);

  it('cancels a campaign that waits for its calling hours (asked once more)', async () => {
    // Calling hours that start two hours from now (UTC): the campaign is active and dials nobody yet.
    const h2 = (new Date().getUTCHours() + 2) % 24;
    const hh = (n: number) => `${String(n).padStart(2, '0')}:00`;
    const made = await page.evaluate(
      async (body) => {
        const r0 = await fetch('/portal/api/auth/session', { credentials: 'same-origin' });
        const session = (await r0.json()) as { csrfToken: string };
        const r = await fetch('/portal/api/v1/campaigns', {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
          body: JSON.stringify(body),
        });
        return { status: r.status, body: (await r.json()) as { id: string } };
      },
      {
        agentId: clinicId,
        name: 'Later',
        from: '+15550300000',
        recipients: [{ phone: BUSY }],
        callingHours: { start: hh(h2), end: hh((h2 + 1) % 24) },
      },
    );
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await visit(`/campaigns/${encodeURIComponent(made.body.id)}`, '[data-testid=campaign-status]');
    expect(await textOf(page, '[data-testid=campaign-status]')).toBe('active');
    await clickText(page, 'button', 'Cancel the campaign');
    await clickText(page, 'button', 'Cancel it');
    await waitText('[data-testid=campaign-status]', 'canceled');
    expect(await page.$('::-p-text(Resume)')).toBeNull();
    expect(h.rest.calls.filter((c) => c.get('To') === BUSY)).toHaveLength(1);
  }, 120_000);

  it('sets daily spending caps (all usage and one key), shows what is left today, and test traffic on usage', async () => {
    // A key first: the caps page has a row per key.
    await visit('/keys', '#f-name');
    await fill(page, 'name', 'Clinic server');
    await click(page, 'form.inline-form button[type=submit]');
    await page.waitForSelector('[data-testid=raw-key]', { visible: true });
    await visit('/caps', '#f-dailyCredits');
    await fill(page, 'dailyCredits', '50000');
    const keyId = await (await page.waitForSelector('tr[data-cap]:not([data-cap=account])', {
      visible: true,
    }))!.evaluate((e) => e.getAttribute('data-cap') ?? '');
    await fill(page, `key-${keyId}`, '1200');
    await clickText(page, 'button', 'Save caps');
    await page.waitForSelector('::-p-text(Saved.)', { visible: true });
    // The caps are read again after the save: wait for the new cap's figure, not the old "—".
    await page.waitForFunction(
      "/\\d/.test(document.querySelector('tr[data-cap=account] [data-testid=left]')?.textContent ?? '')",
    );
    const left = Number((await textOf(page, 'tr[data-cap=account] [data-testid=left]')).replace(/\D/g, ''));
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(50_000);
    // The key has spent nothing today: all of its cap is left.
    await page.waitForFunction(
      `/\\d/.test(document.querySelector('tr[data-cap="${keyId}"] [data-testid=left]')?.textContent ?? '')`,
    );
    expect((await textOf(page, `tr[data-cap="${keyId}"] [data-testid=left]`)).replace(/\D/g, '')).toBe('1200');
    await atBothWidths('caps', () => visit('/caps', '#f-dailyCredits'));
    await visit('/', '[data-testid=test-traffic]');
    expect(await textOf(page, '[data-testid=test-traffic]')).toContain('Test traffic this period: 0 agent-test calls');
    expect(csp).toEqual([]);
  }, 120000);
});
