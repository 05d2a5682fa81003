import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitEntries } from '../../shared/domains/rag/entries.ts';
import { collectionDocuments } from '../../api/services/portal-documents.ts';
import { startTestPlatform, type TestPlatform } from '../../support/helpers/platform.ts';

/**
 * Knowledge the local engine can read aloud (issue #33): a Markdown FAQ uploaded as one document is split by heading
 * at ingest (a Q&A text by question), the split is reported, and the local reply engine answers with the matching
 * entry's text alone — no heading, no neighbouring entries — found by meaning and by its heading.
 */
const FAQ = `# Frequently asked questions

## Opening hours
We are open **9am to 5pm**, Monday to Friday, and 9am to 1pm on Saturdays.

## Emergencies
If you have severe tooth pain, swelling or a broken tooth, call our emergency line on 555 0100 and we will see you the same day.

## Parking
- Free parking in the garage behind the building.
- Street parking is metered.

## Insurance
We accept most dental insurance plans; bring your card to your first visit.
`;
const QA = `Q: Do you take walk-ins?
A: Yes, walk-ins are welcome before noon.

Q: Can I pay by card?
A: We take all major cards and contactless payments.
`;

let p: TestPlatform;
let key: string;
let developerId: string;
let agentId: string;
let collectionId: string;

beforeAll(async () => {
  p = await startTestPlatform({
    roles: ['api'],
    env: { REALTIME_SESSION_SECRET: 'faq-entries-secret-faq-entries-secret-0123' },
  });
  ({ apiKey: key, developerId } = await p.developer());
  const res = await p.request('/v1/agents/provision', {
    method: 'POST',
    key,
    json: {
      name: 'Clinic',
      llmProvider: 'local',
      systemPrompt: 'Answer from the FAQ.',
      firstMessage: 'Hello, this is the clinic.',
      collection: { name: 'faq' },
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const body = (await res.json()) as { agent: { id: string; collectionId: string } };
  agentId = body.agent.id;
  collectionId = body.agent.collectionId;
}, 60_000);
afterAll(() => p?.close());

async function ingest(json: Record<string, unknown>) {
  return p.request(`/v1/collections/${collectionId}/ingest`, { method: 'POST', key, json });
}

async function ask(message: string): Promise<string> {
  const res = await p.request(`/v1/agents/${agentId}/chat`, { method: 'POST', key, json: { message } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { reply: string }).reply;
}

describe('splitting an FAQ', () => {
  it('finds one entry per heading (a title with no text of its own is none), or per question', () => {
    const md = splitEntries(FAQ)!;
    expect(md.map((e) => e.heading)).toEqual(['Opening hours', 'Emergencies', 'Parking', 'Insurance']);
    expect(md[0]!.answer).toBe('We are open 9am to 5pm, Monday to Friday, and 9am to 1pm on Saturdays.');
    expect(md[2]!.answer).toBe('Free parking in the garage behind the building.\nStreet parking is metered.');
    expect(splitEntries(QA)!.map((e) => [e.heading, e.answer])).toEqual([
      ['Do you take walk-ins?', 'Yes, walk-ins are welcome before noon.'],
      ['Can I pay by card?', 'We take all major cards and contactless payments.'],
    ]);
    expect(splitEntries('Just one paragraph of prose.\n\nAnd another.')).toBeNull();
    expect(splitEntries('# Only one heading\ntext')).toBeNull();
  });
});

describe('an FAQ in a collection', () => {
  it('is split by entries at ingest and says so; prose stays split by size; entries can be required', async () => {
    const faq = await ingest({ content: FAQ, metadata: { source: 'faq.md' } });
    expect(faq.status).toBe(201);
    expect(await faq.json()).toMatchObject({ chunksCreated: 4, split: 'entries' });
    const qa = await ingest({ content: QA });
    expect(await qa.json()).toMatchObject({ chunksCreated: 2, split: 'entries' });
    const prose = await ingest({ content: 'Our dentists have thirty years of experience between them.' });
    expect(await prose.json()).toMatchObject({ split: 'size' });
    const forced = await ingest({ content: 'No headings here.', split: 'entries' });
    expect(forced.status).toBe(400);
    const bySize = (await (await ingest({ content: QA, split: 'size' })).json()) as Record<string, unknown>;
    expect(bySize).toMatchObject({ chunksCreated: 1, split: 'size' });
    // The portal's document list says how each was split.
    const docs = await collectionDocuments(p.infra, developerId, collectionId, 10);
    expect(docs.data.find((d) => d.source === 'faq.md')).toMatchObject({ split: 'entries', chunks: 4 });
    const del = await p.request(`/v1/collections/${collectionId}/documents/${String(bySize.documentId)}`, {
      method: 'DELETE',
      key,
    });
    expect(del.status).toBe(204);
  });

  it('the local engine reads the matching entry alone, found by meaning and by heading', async () => {
    expect(await ask('What are your opening hours?')).toBe(
      'We are open 9am to 5pm, Monday to Friday, and 9am to 1pm on Saturdays.',
    );
    const toothache = await ask('I have a terrible toothache');
    expect(toothache).toContain('emergency line');
    expect(toothache).not.toMatch(/Emergencies|Opening hours|Parking|Frequently/);
    expect(await ask('Tell me about parking')).toBe(
      'Free parking in the garage behind the building. Street parking is metered.',
    );
    expect(await ask('Can I pay by card?')).toBe('We take all major cards and contactless payments.');
  });
});
