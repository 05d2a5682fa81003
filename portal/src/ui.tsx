import type { AllHTMLAttributes, ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorMessage } from './api.ts';
import { humanError } from './form-errors.ts';
import { BASE, linkClick } from './router.ts';

export function Link(props: { href: string; children: ComponentChildren; class?: string; current?: boolean }) {
  return (
    <a
      href={BASE + props.href}
      class={props.class}
      aria-current={props.current ? 'page' : undefined}
      onClick={linkClick}
    >
      {props.children}
    </a>
  );
}

/** Re-runs `reload` every `ms` while `active` holds (a run or a campaign in progress), so progress moves on its own. */
export function usePoll(active: boolean, reload: () => void, ms = 2000) {
  useEffect(() => {
    if (!active) return;
    const t = setInterval(reload, ms);
    return () => clearInterval(t);
  }, [active, reload]);
}

/** Loads data for a page; `reload` re-runs the loader (after a write). */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const seq = useRef(0);
  const run = useCallback(() => {
    const n = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => n === seq.current && setState({ data, loading: false }),
      (error: unknown) => n === seq.current && setState({ error, loading: false }),
    );
  }, deps);
  useEffect(run, [run]);
  return { ...state, reload: run };
}

export function PageHeader(props: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <h1 tabIndex={-1}>{props.title}</h1>
      {props.children ? <div class="page-actions">{props.children}</div> : null}
    </header>
  );
}

export function ErrorBox(props: { error: unknown }) {
  if (!props.error) return null;
  const e = props.error;
  return (
    <p class="error" role="alert">
      {errorMessage(e)}
      {e instanceof ApiError && e.requestId ? <span class="muted"> (request {e.requestId})</span> : null}
    </p>
  );
}

export function Loading(props: { what?: string }) {
  return (
    <p class="muted" role="status">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  );
}

/** The error for one form field, when the API's envelope names it in `param`. */
export function fieldError(error: unknown, param: string): string | undefined {
  if (!(error instanceof ApiError) || !error.param) return undefined;
  const p = error.param.replace(/^body\./, '');
  return p === param || p.startsWith(`${param}.`) ? error.message : undefined;
}

/** A labelled input with its inline error wired through aria-describedby. */
export function Field(
  props: {
    label: string;
    name: string;
    error?: string;
    hint?: string;
    as?: 'input' | 'textarea' | 'select';
    children?: ComponentChildren;
  } & Omit<AllHTMLAttributes<HTMLInputElement>, 'as' | 'label' | 'name'>,
) {
  const { label, name, error: raw, hint, as = 'input', children, ...rest } = props;
  // The API's schema wording becomes a sentence about this field, with its label and the bounds it carries.
  const error = raw
    ? humanError(raw, label, { min: rest.min as number | string, max: rest.max as number | string })
    : undefined;
  // A dotted name (`voicemail.message`, the API's param path) makes an id a CSS selector can name: f-voicemail-message.
  const id = `f-${name.replace(/\./g, '-')}`;
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-err` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
    ...rest,
  } as Record<string, unknown>;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {as === 'textarea' ? (
        <textarea {...common} />
      ) : as === 'select' ? (
        <select {...common}>{children}</select>
      ) : (
        <input {...common} />
      )}
      {hint ? (
        <small id={`${id}-hint`} class="muted">
          {hint}
        </small>
      ) : null}
      {error ? (
        <small id={`${id}-err`} class="field-error" role="alert">
          {error}
        </small>
      ) : null}
    </div>
  );
}

export function formValues(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  new FormData(form).forEach((v, k) => {
    if (typeof v === 'string') out[k] = v;
  });
  return out;
}

/** A button that asks once more before a destructive action (no window.confirm: it blocks and is unstyled). */
export function ConfirmButton(props: {
  label: string;
  confirmLabel: string;
  onConfirm: () => void;
  disabled?: boolean;
}) {
  const [armed, setArmed] = useState(false);
  if (!armed)
    return (
      <button type="button" class="danger-outline" disabled={props.disabled} onClick={() => setArmed(true)}>
        {props.label}
      </button>
    );
  return (
    <span class="confirm">
      <button
        type="button"
        class="danger"
        onClick={() => {
          setArmed(false);
          props.onConfirm();
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => setArmed(false)}>
        Cancel
      </button>
    </span>
  );
}

export function CopyButton(props: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(props.text).then(
          () => setDone(true),
          () => setDone(false),
        );
      }}
    >
      {done ? 'Copied' : (props.label ?? 'Copy')}
    </button>
  );
}

export const fmtDate = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
export const fmtNum = (n: number | null | undefined) => (n === null || n === undefined ? '—' : n.toLocaleString());
export const fmtMs = (n: number | null | undefined) => (n === null || n === undefined ? '—' : `${Math.round(n)} ms`);

/** A write from a page: busy while it runs, its error kept for the form, then `after` (usually a reload). */
export function useAction(after?: () => void) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  async function act(fn: () => Promise<void>): Promise<void> {
    setBusy(true);
    setError(null);
    try {
      await fn();
      after?.();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  return { error, busy, act, setError };
}

/** Column headers; an empty label becomes a screen-reader-only "Actions". */
export function THead(props: { cols: string[] }) {
  return (
    <thead>
      <tr>
        {props.cols.map((c, i) => (
          <th scope="col" key={i}>
            {c || <span class="sr-only">Actions</span>}
          </th>
        ))}
      </tr>
    </thead>
  );
}
