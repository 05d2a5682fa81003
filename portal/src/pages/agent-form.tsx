import { useState } from 'preact/hooks';
import { ApiError, request, v1 } from '../api.ts';
import { useAgentSchema } from '../agent-schema.ts';
import {
  LLM_PROVIDER_LABELS,
  LLM_PROVIDERS,
  LOCAL_TTS_LABELS,
  TTS_PROVIDERS,
} from '../../../shared/contracts/providers.ts';
import type { Agent, Collection, LlmProviderInfo, VoiceEngineInfo } from '../types.ts';
import { ErrorBox, Field, fieldError, useAsync } from '../ui.tsx';
import { FieldInputError, initialState, TEXT_FIELDS, toBody, type FormState } from './agent-form-state.ts';
import { VoicePicker } from './agent-form-parts.tsx';
import {
  AnalysisGroup,
  Group,
  type GroupProps,
  LimitsGroup,
  PhoneGroup,
  TurnTakingGroup,
} from './agent-form-groups.tsx';

/** The inputs that can carry an error of their own (an error about any other field shows above the buttons). */
const PLACED = [
  ...TEXT_FIELDS,
  ...['temperature', 'maxTokens', 'collectionId', 'goodbyeMessage', 'variables', 'ttsModel', 'styleProfile', 'tools'],
  ...['metadata', 'voicemail', 'callTools', 'turnTaking', 'audio', 'maxCredits', 'maxDurationSeconds', 'analysis'],
];

/**
 * Create and edit share this form: every field the API has, in groups (Conversation, Voice and hearing,
 * Knowledge, Tools, Phone, Turn-taking, Limits, and Analysis once the API has it). See agent-form-state.ts for
 * how the inputs become the request body.
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
  const analysis = (a as unknown as Record<string, unknown> | undefined)?.analysis as
    Record<string, unknown> | undefined;
  // Which LLM providers this developer can use now (platform key, stored key, none), and the one a new agent
  // gets by default: with no key anywhere that is the local reply engine, so a first agent works.
  const providers = useAsync(() => v1<{ data: LlmProviderInfo[] }>('/llm-providers'));
  const voices = useAsync(() => request<{ data: VoiceEngineInfo[] }>('/voice-engines'));
  const schema = useAgentSchema();
  const [st, setSt] = useState<FormState>(() => initialState(a, analysis));
  const t = st.text;
  const setText = (k: string, value: string) => setSt((s) => ({ ...s, text: { ...s.text, [k]: value } }));
  // Controlled fields: a re-render (busy, errors) must never put back a value the user has changed.
  const bind = (k: string) => ({
    value: t[k] ?? '',
    onInput: (e: Event) => setText(k, (e.currentTarget as HTMLInputElement).value),
  });
  const err = (p: string) =>
    error instanceof FieldInputError ? (error.param === p ? error.message : undefined) : fieldError(error, p);
  const infos = providers.data?.data ?? [];
  const llm = t.llmProvider || infos.find((i) => i.isDefault)?.id || 'openai';
  const llmInfo = infos.find((i) => i.id === llm);
  const voiceInfos = voices.data?.data ?? [];
  const tts = t.ttsProvider || 'default';
  const ttsInfo = voiceInfos.find((i) => i.id === tts);
  const sc = schema.data;
  const withAnalysis = Boolean(sc?.fields.has('analysis'));
  const placed = (p: string) => PLACED.some((f) => p === f || p.startsWith(`${f}.`));
  // An error about a field the form has is shown under it (or under its group); any other above the buttons.
  const param = error instanceof ApiError ? (error.param ?? '').replace(/^body\./, '') : '';
  const unplaced = error && !(error instanceof FieldInputError) && !(param && placed(param));

  // What the groups in agent-form-groups.tsx share with the form.
  const g: GroupProps = { bind, err, st, setSt, sc, agentId: a?.id, localEngine: llmInfo?.languageModel === false };
  return (
    <form
      class="agent-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        let body: Record<string, unknown>;
        try {
          body = toBody(st, { editing: a, withCollection: Boolean(props.collections), withAnalysis });
        } catch (e2) {
          setError(e2);
          return;
        }
        setBusy(true);
        setError(null);
        setSaved(false);
        props.onSave(body).then(
          () => (setBusy(false), setSaved(true)),
          (e2: unknown) => (setBusy(false), setError(e2)),
        );
      }}
    >
      <Group title="Conversation" id="conversation">
        <Field label="Name" name="name" {...bind('name')} required maxLength={100} error={err('name')} />
        <Field label="Description" name="description" {...bind('description')} error={err('description')} />
        <Field
          label="System prompt"
          name="systemPrompt"
          as="textarea"
          rows={5}
          {...bind('systemPrompt')}
          error={err('systemPrompt')}
          hint="{{name}} is filled from the call's variables."
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
          <Field label="Language" name="language" {...bind('language')} placeholder="en" error={err('language')} />
        </div>
        <Field
          label="Variable defaults"
          name="variables"
          as="textarea"
          rows={3}
          {...bind('variables')}
          hint="One per line, name=default: used for {{name}} when a call does not give it."
          error={err('variables')}
        />
        <Field
          label="Goodbye message"
          name="goodbyeMessage"
          {...bind('goodbyeMessage')}
          hint="Said when a cap or the balance ends a call; empty = the platform's."
          error={err('goodbyeMessage')}
        />
      </Group>

      <Group title="Voice and hearing" id="voice">
        <div class="grid2">
          <Field
            label="Voice provider"
            name="ttsProvider"
            as="select"
            {...bind('ttsProvider')}
            value={tts}
            hint={voiceHint(ttsInfo)}
            error={err('ttsProvider')}
          >
            {TTS_PROVIDERS.map((p) => {
              const info = voiceInfos.find((i) => i.id === p);
              return (
                <option key={p} value={p}>
                  {LOCAL_TTS_LABELS[p] ?? p}
                  {keyTag(info?.key)}
                </option>
              );
            })}
          </Field>
          <Field
            label="Voice model"
            name="ttsModel"
            {...bind('ttsModel')}
            placeholder="the provider's default"
            error={err('ttsModel')}
          />
        </div>
        <VoicePicker
          provider={tts}
          value={t.voiceId ?? ''}
          onChange={(v) => setText('voiceId', v)}
          sample={t.firstMessage ?? ''}
          error={err('voiceId')}
        />
        <div class="grid2">
          <Field
            label="Speed"
            name="styleProfile.speed"
            type="number"
            step="0.1"
            min="0.5"
            max="2"
            {...bind('speed')}
            hint="0.5 to 2; empty = normal"
            error={err('styleProfile.speed')}
          />
          <Field
            label="Pitch"
            name="styleProfile.pitch"
            type="number"
            step="0.1"
            min="0.5"
            max="2"
            {...bind('pitch')}
            hint="0.5 to 2; empty = normal"
            error={err('styleProfile.pitch')}
          />
        </div>
        <fieldset class="subgroup">
          <legend>Caller audio processing</legend>
          {(sc?.inputProcessors ?? []).map((c) => (
            <label key={c.name} class="check">
              <input
                type="checkbox"
                name={`audio.inputProcessors.${c.name}`}
                checked={st.inputProcessors.includes(c.name)}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setSt((s) => ({
                    ...s,
                    inputProcessors: on
                      ? [...s.inputProcessors, c.name]
                      : s.inputProcessors.filter((n) => n !== c.name),
                  }));
                }}
              />{' '}
              <strong>{c.name}</strong> <span class="muted">{c.description}</span>
            </label>
          ))}
          {err('audio') ? (
            <p class="field-error" role="alert">
              {err('audio')}
            </p>
          ) : null}
        </fieldset>
      </Group>

      {props.collections ? (
        <Group title="Knowledge" id="knowledge">
          <Field
            label="Knowledge collection"
            name="collectionId"
            as="select"
            {...bind('collectionId')}
            hint="The agent searches it (search_knowledge) before answering."
            error={err('collectionId')}
          >
            <option value="">None</option>
            {props.collections.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </Field>
        </Group>
      ) : null}

      <Group
        title="Tools"
        id="tools"
        note="Custom tools the model may call: the platform POSTs each call to its url, signed with the agent's tool signing secret."
      >
        <Field
          label="Custom tools (JSON)"
          name="tools"
          as="textarea"
          rows={4}
          spellcheck={false}
          {...bind('tools')}
          placeholder='[{"name": "book_visit", "description": "…", "url": "https://…", "parameters": {"type": "object", "properties": {}}}]'
          error={err('tools')}
        />
        <Field
          label="Metadata (JSON)"
          name="metadata"
          as="textarea"
          rows={2}
          spellcheck={false}
          {...bind('metadata')}
          placeholder='{"team": "clinic"}'
          error={err('metadata')}
        />
      </Group>

      <PhoneGroup {...g} />
      <TurnTakingGroup {...g} />
      <LimitsGroup {...g} />
      {withAnalysis ? <AnalysisGroup {...g} /> : null}

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
