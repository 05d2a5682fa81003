import { useEffect, useState } from 'preact/hooks';
import { errorMessage, postForBlob, v1 } from '../api.ts';
import type { Estimate, VoiceItem } from '../types.ts';
import { Field, fmtNum, useAsync } from '../ui.tsx';
import type { TransferRow } from './agent-form-state.ts';

/**
 * The voice list of the chosen provider (GET /v1/voices: what this deployment can speak) and a "hear it" button
 * that synthesizes a line in that voice (POST /v1/synthesize, metered like any synthesis) into an audio player.
 */
export function VoicePicker(props: {
  provider: string;
  value: string;
  onChange: (v: string) => void;
  sample: string;
  error?: string;
}) {
  const voices = useAsync(
    () => v1<{ data: VoiceItem[] }>('/voices', { query: { provider: props.provider } }),
    [props.provider],
  );
  const list = voices.data?.data ?? [];
  const known = list.some((v) => v.id === props.value);
  const [audio, setAudio] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  useEffect(() => () => void (audio && URL.revokeObjectURL(audio)), [audio]);
  const hear = async () => {
    setBusy(true);
    setErr(null);
    try {
      const blob = await postForBlob('/v1/synthesize', {
        text: props.sample.trim().slice(0, 300) || 'Hello, this is how I sound on a call.',
        voiceId: props.value || 'default',
        provider: props.provider,
        format: 'wav',
      });
      setAudio(URL.createObjectURL(blob));
    } catch (e) {
      setErr(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="voice-picker">
      <Field
        label="Voice"
        name="voiceId"
        as="select"
        value={props.value || 'default'}
        onChange={(e) => props.onChange(e.currentTarget.value)}
        hint={
          voices.loading ? 'Loading the voices…' : `${list.length} voices on this deployment for ${props.provider}.`
        }
        error={props.error}
      >
        {!known ? <option value={props.value || 'default'}>{props.value || 'default'}</option> : null}
        {list.map((v) => (
          <option key={v.id} value={v.id}>
            {v.name} ({v.language}, {v.gender})
          </option>
        ))}
      </Field>
      <div class="row">
        <button type="button" onClick={() => void hear()} disabled={busy}>
          {busy ? 'Synthesizing…' : 'Hear it'}
        </button>
        {audio ? <audio controls src={audio} aria-label="Voice sample" data-testid="voice-sample" /> : null}
      </div>
      {err ? (
        <p class="error" role="alert">
          {err}
        </p>
      ) : null}
    </div>
  );
}

/** Where `transfer_call` may send the caller: one row per target (name, E.164 number or SIP address, mode). */
export function TransferTargets(props: {
  rows: TransferRow[];
  onChange: (rows: TransferRow[]) => void;
  error: (param: string) => string | undefined;
}) {
  const set = (i: number, patch: Partial<TransferRow>) =>
    props.onChange(props.rows.map((r, k) => (k === i ? { ...r, ...patch } : r)));
  return (
    <div class="transfer-targets">
      {props.rows.map((r, i) => {
        const p = `callTools.transferTargets.${i}`;
        return (
          <fieldset key={i} class="subgroup">
            <legend>Transfer target {i + 1}</legend>
            <div class="grid2">
              <Field
                label="Name"
                name={`${p}.name`}
                value={r.name}
                onInput={(e) => set(i, { name: e.currentTarget.value })}
                hint="The model names it to transfer_call, e.g. front_desk"
                error={props.error(`${p}.name`)}
              />
              <Field
                label="Number or SIP address"
                name={`${p}.to`}
                value={r.to}
                placeholder="+14155550123"
                onInput={(e) => set(i, { to: e.currentTarget.value })}
                error={props.error(`${p}.to`)}
              />
              <Field
                label="Mode"
                name={`${p}.mode`}
                as="select"
                value={r.mode}
                onChange={(e) => set(i, { mode: e.currentTarget.value as TransferRow['mode'] })}
                error={props.error(`${p}.mode`)}
              >
                <option value="cold">Cold: put the caller through at once</option>
                <option value="warm">Warm: the person first hears who is calling and why</option>
              </Field>
              <Field
                label="When to transfer"
                name={`${p}.description`}
                value={r.description}
                onInput={(e) => set(i, { description: e.currentTarget.value })}
                error={props.error(`${p}.description`)}
              />
            </div>
            <button type="button" onClick={() => props.onChange(props.rows.filter((_, k) => k !== i))}>
              Remove target {i + 1}
            </button>
          </fieldset>
        );
      })}
      <button
        type="button"
        onClick={() =>
          props.onChange([
            ...props.rows,
            {
              name: props.rows.length ? `target_${props.rows.length + 1}` : 'front_desk',
              to: '',
              mode: 'cold',
              description: '',
            },
          ])
        }
      >
        Add a transfer target
      </button>
    </div>
  );
}

/**
 * The price beside the caps (POST /v1/estimate, kind `call`): what a call of the capped length would cost on
 * this agent as saved, and how long the credit cap lasts at that rate. Nothing is charged.
 */
export function LimitsEstimate(props: { agentId?: string; maxCredits: string; maxDurationSeconds: string }) {
  const seconds = Number(props.maxDurationSeconds) || 0;
  const minutes = seconds >= 10 ? seconds / 60 : 1;
  // A phone call's price; where this deployment cannot take phone calls on this agent (no phone STT), a browser
  // call's, said as such.
  const est = useAsync(async () => {
    if (!props.agentId) return null;
    const price = (channel: 'twilio' | 'direct') =>
      v1<Estimate>('/estimate', { json: { kind: 'call', agentId: props.agentId, minutes, channel } });
    try {
      return { e: await price('twilio'), call: 'phone call' };
    } catch {
      return { e: await price('direct'), call: 'browser call (phone calls are not available on this agent here)' };
    }
  }, [props.agentId, minutes]);
  if (!props.agentId) return <p class="muted">Save the agent to see what a call on it would cost.</p>;
  const e = est.data?.e;
  if (!e) return est.error ? <p class="muted">No estimate: {errorMessage(est.error)}</p> : null;
  const perMinute = e.credits / minutes;
  const cap = Number(props.maxCredits) || 0;
  const lasts = perMinute > 0 ? Math.round((cap / perMinute) * 10) / 10 : 0;
  // The credit cap that runs out before the duration cap is what ends such a call, so it is what it costs at most.
  const capFirst = seconds >= 10 && lasts < minutes;
  return (
    <p class="estimate" data-testid="limits-estimate" role="status">
      A {seconds >= 10 ? `${Math.round(minutes * 10) / 10}-minute (capped)` : '1-minute'} {est.data?.call} on this agent
      as saved costs about <strong>{fmtNum(e.credits)} credits</strong> ({fmtNum(Math.round(perMinute))} a minute).
      {cap > 0 && perMinute > 0
        ? ` The credit cap of ${fmtNum(cap)} lasts about ${fmtNum(lasts)} ${lasts === 1 ? 'minute' : 'minutes'}${
            capFirst ? `: it ends such a call first, at no more than ${fmtNum(cap)} credits.` : '.'
          }`
        : ''}
    </p>
  );
}
