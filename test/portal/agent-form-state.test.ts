import { describe, expect, it } from 'vitest';
import { FieldInputError, initialState, toBody } from '../../portal/src/pages/agent-form-state.ts';
import type { Agent } from '../../portal/src/types.ts';

/** The agent form's inputs → the request body: what is set is sent, what was cleared on an edit is removed (null). */
const base: Agent = {
  id: 'agt_1',
  name: 'Clinic',
  description: '',
  systemPrompt: 'You confirm.',
  firstMessage: 'Hello.',
  voiceId: 'default',
  ttsProvider: 'default',
  ttsModel: null,
  llmProvider: 'openai',
  llmModel: 'gpt-4o-mini',
  collectionId: null,
  styleProfile: null,
  language: 'en',
  temperature: 0.7,
  maxTokens: 1024,
  status: 'active',
  metadata: {},
  tools: [],
  version: 1,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
};
const opts = { withCollection: true, withAnalysis: false };

describe('agent form body', () => {
  it('a new agent: phone, turn-taking and caps become their API objects', () => {
    const s = initialState(undefined);
    Object.assign(s.text, {
      name: 'Clinic',
      voicemailAction: 'leave_message',
      voicemailMessage: 'Hi {{first_name}}, call us back.',
      interruption: 'vad-only',
      bargeInMinMs: '120',
      maxCredits: '400',
      maxDurationSeconds: '300',
      variables: 'first_name=there\nclinic = Main St',
    });
    s.endCall = true;
    s.transfers = [{ name: 'front_desk', to: '+14155550199', mode: 'warm', description: '' }];
    s.inputProcessors = ['highpass'];
    const b = toBody(s, { ...opts, editing: undefined });
    expect(b).toMatchObject({
      name: 'Clinic',
      voicemail: { action: 'leave_message', message: 'Hi {{first_name}}, call us back.' },
      callTools: { endCall: true, transferTargets: [{ name: 'front_desk', to: '+14155550199', mode: 'warm' }] },
      turnTaking: { interruption: { name: 'vad-only', speaking: { minMs: 120 } } },
      audio: { inputProcessors: [{ name: 'highpass' }] },
      maxCredits: 400,
      maxDurationSeconds: 300,
      variables: { first_name: { default: 'there' }, clinic: { default: 'Main St' } },
      collectionId: null,
    });
    expect(b).not.toHaveProperty('goodbyeMessage');
    expect(b).not.toHaveProperty('analysis');
  });

  it('an edit that clears settings sends null for them, and keeps fields the form does not show', () => {
    const agent: Agent = {
      ...base,
      voicemail: { action: 'hangup' },
      maxCredits: 400,
      turnTaking: { completeMs: 300, endpointingMs: 800 },
      goodbyeMessage: 'Bye.',
    };
    const s = initialState(agent);
    expect(s.text.voicemailAction).toBe('hangup');
    expect(s.text.endpointingMs).toBe('800');
    Object.assign(s.text, { voicemailAction: '', maxCredits: '', goodbyeMessage: '', endpointingMs: '900' });
    const b = toBody(s, { ...opts, editing: agent });
    expect(b.voicemail).toBeNull();
    expect(b.maxCredits).toBeNull();
    expect(b.goodbyeMessage).toBeNull();
    expect(b.turnTaking).toEqual({ completeMs: 300, endpointingMs: 900 });
    expect(b).not.toHaveProperty('callTools');
  });

  it('the Analysis group, once the API has the field, sends its shape', () => {
    const s = initialState(undefined);
    Object.assign(s.text, {
      name: 'X',
      successCriteria: 'The visit is confirmed.',
      structuredSchema: '{"type":"object"}',
    });
    s.analysisSummary = true;
    expect(toBody(s, { ...opts, withAnalysis: true, editing: undefined }).analysis).toEqual({
      summary: true,
      successCriteria: 'The visit is confirmed.',
      structuredData: { schema: { type: 'object' } },
    });
  });

  it('a JSON box that is not JSON is said under that box before anything is sent', () => {
    const s = initialState(undefined);
    s.text.name = 'X';
    s.text.tools = '[{';
    expect(() => toBody(s, { ...opts, editing: undefined })).toThrow(FieldInputError);
  });
});
