import { useState } from 'preact/hooks';
import { request, v1 } from '../api.ts';
import { LLM_PROVIDER_LABELS, LLM_PROVIDERS, TTS_PROVIDERS } from '../../../shared/kernel/contracts/providers.ts';
import type { Agent, Collection, LlmProviderInfo, VoiceEngineInfo } from '../types.ts';
import { ErrorBox, Field, fieldError, useAsync } from '../ui.tsx';

/** Text fields go to the API as typed; number fields as numbers; the collection as an id or null. */
const TEXT_FIELDS = [
  'name',
  'description',
  'systemPrompt',
  'firstMessage',
  'llmProvider',
  'llmModel',
  'ttsProvider',
  'voiceId',
  'language',
];
const NUMBER_FIELDS = ['temperature', 'maxTokens'];
const FIELDS = [...TEXT_FIELDS, ...NUMBER_FIELDS, 'collectionId'];

/**
 * Create and edit share this form. Values go to the API as typed; the API validates, and its envelope's `param`
 * puts each error under the field it is about.
 */
export function AgentForm(props: {
  agent?: Agent;
  collections?: Collection[];
  submitLabel: string;
  onSave: (body: Record<string, unknown>) => Promise<void>;
  onCancel?: () => void;
}) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const a = props.agent;
  // Which LLM providers this developer can use now (platform key, stored key, none), and the one a new agent
  // gets by default: with no key anywhere that is the local reply engine, so a first agent works.
  const providers = useAsync(() => v1<{ data: LlmProviderInfo[] }>('/llm-providers'));
  const voices = useAsync(() => request<{ data: VoiceEngineInfo[] }>('/voice-engines'));
  const [vals, setVals] = useState<Record<string, string>>(() => {
    const v: Record<string, string> = { ttsProvider: 'default', collectionId: '' };
    for (const k of FIELDS) {
      const x = (a as unknown as Record<string, unknown> | undefined)?.[k];
      if (x !== undefined && x !== null) v[k] = String(x);
    }
    return v;
  });
  // Controlled fields: a re-render (busy, errors) must never put back a value the user has changed.
  const bind = (k: string) => ({
    value: vals[k] ?? '',
    onInput: (e: Event) => {
      const value = (e.currentTarget as HTMLInputElement).value;
      setVals((s) => ({ ...s, [k]: value }));
    },
  });
  const err = (p: string) => fieldError(error, p);
  const infos = providers.data?.data ?? [];
  const llm = vals.llmProvider ?? infos.find((i) => i.isDefault)?.id ?? 'openai';
  const llmInfo = infos.find((i) => i.id === llm);
  const voiceInfos = voices.data?.data ?? [];
  const ttsInfo = voiceInfos.find((i) => i.id === (vals.ttsProvider ?? 'default'));
  const unplaced = error && !FIELDS.some((f) => err(f));

  return (
    <form
      class="agent-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const f = vals;
        const body: Record<string, unknown> = {};
        for (const k of TEXT_FIELDS) if (f[k] !== undefined && (f[k] !== '' || a)) body[k] = f[k];
        for (const k of NUMBER_FIELDS) if (f[k]) body[k] = Number(f[k]);
        if (props.collections) body.collectionId = f.collectionId || null;
        setBusy(true);
        setError(null);
        setSaved(false);
        props.onSave(body).then(
          () => (setBusy(false), setSaved(true)),
          (e2: unknown) => (setBusy(false), setError(e2)),
        );
      }}
    >
      <Field label="Name" name="name" {...bind('name')} required maxLength={100} error={err('name')} />
      <Field label="Description" name="description" {...bind('description')} error={err('description')} />
      <Field
        label="System prompt"
        name="systemPrompt"
        as="textarea"
        rows={5}
        {...bind('systemPrompt')}
        error={err('systemPrompt')}
      />
      <Field
        label="First message"
        name="firstMessage"
        {...bind('firstMessage')}
        hint="Spoken when a call starts."
        error={err('firstMessage')}
      />
      <div class="grid2">
        <Field
          label="LLM provider"
          name="llmProvider"
          as="select"
          {...bind('llmProvider')}
          value={llm}
          hint={llmHint(llmInfo)}
          error={err('llmProvider')}
        >
          {LLM_PROVIDERS.map((p) => {
            const info = infos.find((i) => i.id === p);
            return (
              <option key={p} value={p}>
                {LLM_PROVIDER_LABELS[p]}
                {keyTag(info?.key)}
              </option>
            );
          })}
        </Field>
        <Field
          label="LLM model"
          name="llmModel"
          {...bind('llmModel')}
          placeholder={llmInfo?.defaultModel ?? 'gpt-4o-mini'}
          error={err('llmModel')}
        />
        <Field
          label="Voice provider"
          name="ttsProvider"
          as="select"
          {...bind('ttsProvider')}
          hint={voiceHint(ttsInfo)}
          error={err('ttsProvider')}
        >
          {TTS_PROVIDERS.map((p) => {
            const info = voiceInfos.find((i) => i.id === p);
            return (
              <option key={p} value={p}>
                {p === 'default' ? 'default (local, self-hosted)' : p}
                {keyTag(info?.key)}
              </option>
            );
          })}
        </Field>
        <Field label="Voice" name="voiceId" {...bind('voiceId')} placeholder="default" error={err('voiceId')} />
        <Field label="Language" name="language" {...bind('language')} placeholder="en" error={err('language')} />
        <Field
          label="Temperature"
          name="temperature"
          type="number"
          step="0.1"
          min="0"
          max="2"
          {...bind('temperature')}
          hint="0 to 2"
          error={err('temperature')}
        />
        <Field
          label="Max tokens"
          name="maxTokens"
          type="number"
          min="1"
          max="16384"
          {...bind('maxTokens')}
          error={err('maxTokens')}
        />
        {props.collections ? (
          <Field
            label="Knowledge collection"
            name="collectionId"
            as="select"
            {...bind('collectionId')}
            error={err('collectionId')}
          >
            <option value="">None</option>
            {props.collections.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </Field>
        ) : null}
      </div>
      {unplaced ? <ErrorBox error={error} /> : null}
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          {props.submitLabel}
        </button>
        {props.onCancel ? (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
        {saved && a ? (
          <span role="status" class="ok">
            Saved.
          </span>
        ) : null}
      </div>
    </form>
  );
}

type KeySource = LlmProviderInfo['key'] | VoiceEngineInfo['key'];

/** Where an engine's key comes from, beside its name in the list: usable or not is visible before choosing. */
function keyTag(key: KeySource | undefined): string {
  if (key === 'platform') return ' (platform key)';
  if (key === 'stored') return ' (your key)';
  if (key === 'none') return ' (no key)';
  if (key === 'not-installed') return ' (not installed)';
  return '';
}

const KEY_HINTS: Partial<Record<KeySource, string>> = {
  platform: 'Usable: the platform has a key (metered to you).',
  stored: 'Usable: your stored key is used.',
};

/** What the selected LLM provider needs, said before saving rather than on the first failed turn. */
function llmHint(info: LlmProviderInfo | undefined): string | undefined {
  if (!info) return undefined;
  if (!info.languageModel)
    return 'Answers with the best-matching passage of the knowledge collection and greets with the first message. Needs no key; it is not a language model.';
  return (
    KEY_HINTS[info.key] ??
    'No key: add one under Provider keys (or send X-Provider-Key-… per request), or turns will fail.'
  );
}

/** Whether the selected voice engine can speak with the keys present, said before saving. */
function voiceHint(info: VoiceEngineInfo | undefined): string | undefined {
  if (!info) return undefined;
  if (info.key === 'not-needed') return 'Usable: runs on this server, needs no key.';
  if (KEY_HINTS[info.key]) return KEY_HINTS[info.key];
  if (info.key === 'not-installed') return 'Not available on this server: calls would be refused.';
  return 'No key: add one under Provider keys, or calls on this agent are refused at the start.';
}
