import type { ComponentChildren } from 'preact';
import type { AgentSchemaInfo, Choice } from '../agent-schema.ts';
import { Field } from '../ui.tsx';
import type { FormState } from './agent-form-state.ts';
import { LimitsEstimate, TransferTargets } from './agent-form-parts.tsx';

/**
 * The agent form's groups past the first ones (agent-form.tsx): Phone, Turn-taking, Limits and Analysis. Each
 * gets the form's bindings, errors and state; none keeps state of its own.
 */
export interface GroupProps {
  bind: (k: string) => { value: string; onInput: (e: Event) => void };
  err: (param: string) => string | undefined;
  st: FormState;
  setSt: (fn: (s: FormState) => FormState) => void;
  sc: AgentSchemaInfo | undefined;
  agentId: string | undefined;
  /** The chosen LLM is the local reply engine (a lookup, not a language model): analysis is rule-based. */
  localEngine: boolean;
}

/** A group of the form: a fieldset with its legend (always shown, so no error hides in a closed group). */
export function Group(props: { title: string; id: string; children: ComponentChildren; note?: string }) {
  return (
    <fieldset class="form-group" id={`group-${props.id}`}>
      <legend>{props.title}</legend>
      {props.note ? <p class="muted">{props.note}</p> : null}
      {props.children}
    </fieldset>
  );
}

export const describe = (list: Choice[], name: string) => list.find((c) => c.name === name)?.description;

/** What the agent does on phone calls: an answering machine, a transfer to a person, hanging up. */
export function PhoneGroup({ bind, err, st, setSt }: GroupProps) {
  const t = st.text;
  return (
    <Group
      title="Phone"
      id="phone"
      note="What the agent does on phone calls: an answering machine, handing the caller to a person, hanging up."
    >
      <Field
        label="When a machine answers"
        name="voicemail.action"
        as="select"
        {...bind('voicemailAction')}
        error={err('voicemail.action')}
      >
        <option value="">Talk as to a person (no voicemail handling)</option>
        <option value="hangup">Hang up</option>
        <option value="leave_message">Leave a message after the beep</option>
      </Field>
      {t.voicemailAction === 'leave_message' ? (
        <Field
          label="Voicemail message"
          name="voicemail.message"
          as="textarea"
          rows={2}
          {...bind('voicemailMessage')}
          hint="{{name}} is filled from the call's variables."
          error={err('voicemail.message') ?? err('voicemail')}
        />
      ) : null}
      <label class="check">
        <input
          type="checkbox"
          name="callTools.endCall"
          checked={st.endCall}
          onChange={(e) => setSt((s) => ({ ...s, endCall: e.currentTarget.checked }))}
        />{' '}
        The agent may end the call (end_call) once its goodbye has played
      </label>
      <TransferTargets rows={st.transfers} onChange={(rows) => setSt((s) => ({ ...s, transfers: rows }))} error={err} />
      {err('callTools') && !st.transfers.some((_, i) => err(`callTools.transferTargets.${i}`)) ? (
        <p class="field-error" role="alert">
          {err('callTools')}
        </p>
      ) : null}
    </Group>
  );
}

/** When the caller's turn ends and what interrupts the agent, from the API's catalogue. */
export function TurnTakingGroup({ bind, err, st, sc }: GroupProps) {
  const t = st.text;
  return (
    <Group
      title="Turn-taking"
      id="turn-taking"
      note="When the caller's turn ends and when speech over the agent interrupts it; empty = the platform's defaults."
    >
      <div class="grid2">
        <Field
          label="Turn detector"
          name="turnTaking.detector"
          as="select"
          {...bind('detector')}
          hint={describe(sc?.detectors ?? [], t.detector || 'default')}
          error={err('turnTaking.detector')}
        >
          <option value="">Platform default</option>
          {(sc?.detectors ?? []).map((c) => (
            <option key={c.name} value={c.name}>
              {c.name}
            </option>
          ))}
        </Field>
        <Field
          label="Interruption detector"
          name="turnTaking.interruption"
          as="select"
          {...bind('interruption')}
          hint={describe(sc?.interruptions ?? [], t.interruption || 'default')}
          error={err('turnTaking.interruption')}
        >
          <option value="">Platform default</option>
          {(sc?.interruptions ?? []).map((c) => (
            <option key={c.name} value={c.name}>
              {c.name}
            </option>
          ))}
        </Field>
        {t.interruption ? (
          <Field
            label="Shortest speech that interrupts (ms)"
            name="turnTaking.interruption.speaking.minMs"
            type="number"
            min="60"
            max="2000"
            {...bind('bargeInMinMs')}
            error={err('turnTaking.interruption')}
          />
        ) : null}
        <Field
          label="End-of-turn silence (ms)"
          name="turnTaking.endpointingMs"
          type="number"
          min="100"
          max="3000"
          {...bind('endpointingMs')}
          error={err('turnTaking.endpointingMs')}
        />
        <Field
          label="Eagerness"
          name="turnTaking.eagerness"
          as="select"
          {...bind('eagerness')}
          error={err('turnTaking.eagerness')}
        >
          <option value="">Platform default</option>
          <option value="low">Low: waits longer</option>
          <option value="normal">Normal</option>
          <option value="high">High: answers sooner</option>
        </Field>
        <Field
          label="Prepare the reply before the turn ends"
          name="turnTaking.preemptive"
          as="select"
          {...bind('preemptive')}
          error={err('turnTaking.preemptive')}
        >
          <option value="">Platform default</option>
          <option value="true">Yes</option>
          <option value="false">No</option>
        </Field>
      </div>
      {err('turnTaking') &&
      !['detector', 'interruption', 'endpointingMs', 'eagerness', 'preemptive'].some((k) => err(`turnTaking.${k}`)) ? (
        <p class="field-error" role="alert">
          {err('turnTaking')}
        </p>
      ) : null}
    </Group>
  );
}

/** Per-call caps in credits and in seconds, with the estimate beside them. */
export function LimitsGroup({ bind, err, st, agentId }: GroupProps) {
  const t = st.text;
  return (
    <Group
      title="Limits"
      id="limits"
      note="Per-call caps: at either, the agent says its goodbye and ends the call (max-credits, max-duration)."
    >
      <div class="grid2">
        <Field
          label="Credit cap per call"
          name="maxCredits"
          type="number"
          min="1"
          max="1000000000000"
          {...bind('maxCredits')}
          hint="Credits; empty = no cap"
          error={err('maxCredits')}
        />
        <Field
          label="Duration cap per call (seconds)"
          name="maxDurationSeconds"
          type="number"
          min="10"
          max="86400"
          {...bind('maxDurationSeconds')}
          hint="Seconds of call; empty = no cap"
          error={err('maxDurationSeconds')}
        />
      </div>
      <LimitsEstimate
        agentId={agentId}
        maxCredits={t.maxCredits ?? ''}
        maxDurationSeconds={t.maxDurationSeconds ?? ''}
      />
    </Group>
  );
}

/** After-call analysis: shown only once the API's agent schema has the field. Its text follows the agent's LLM. */
export function AnalysisGroup({ bind, err, st, setSt, localEngine }: GroupProps) {
  return (
    <Group
      title="Analysis"
      id="analysis"
      note={
        localEngine
          ? 'After each call. The local reply engine is not a language model: its analysis is rule-based and free. It lists the phone numbers, names, dates and times the caller said, and whether they asked to be called back; it cannot write a summary, fill structured data or judge success (choose a language model for those).'
          : "After each call, on the agent's LLM (metered like its replies): a summary, structured data and whether the call succeeded. The result is on the call's page and in the call.analyzed webhook."
      }
    >
      <label class="check">
        <input
          type="checkbox"
          name="analysis.summary"
          checked={st.analysisSummary}
          onChange={(e) => setSt((s) => ({ ...s, analysisSummary: e.currentTarget.checked }))}
        />{' '}
        Write a summary of each call
      </label>
      <Field
        label="Success criteria"
        name="analysis.successCriteria"
        as="textarea"
        rows={2}
        {...bind('successCriteria')}
        hint="In words; each call is judged against them, with the reason. Empty = not judged."
        error={err('analysis.successCriteria')}
      />
      <Field
        label="Structured data (JSON Schema)"
        name="analysis.structuredData"
        as="textarea"
        rows={6}
        spellcheck={false}
        {...bind('structuredSchema')}
        placeholder='{"type": "object", "properties": {"day": {"type": "string"}}}'
        hint="The JSON Schema of an object to fill from each call; empty = none."
        error={err('analysis.structuredData') ?? err('analysis')}
      />
    </Group>
  );
}
