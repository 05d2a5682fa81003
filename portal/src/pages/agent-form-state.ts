import type { Agent } from '../types.ts';

/**
 * The agent form's state: every field the API has, as the inputs hold it (text), and the request body made from
 * it. Create sends only what was filled in; edit (PUT) also sends `null` for what was cleared, so emptying a field
 * removes the setting. Values go to the API as typed: the API validates, and its envelope's `param` (for example
 * `callTools.transferTargets.0.to`) puts each error under the input of that name.
 */
export interface TransferRow {
  name: string;
  to: string;
  mode: 'cold' | 'warm';
  description: string;
}

export interface FormState {
  text: Record<string, string>;
  endCall: boolean;
  transfers: TransferRow[];
  inputProcessors: string[];
  analysisSummary: boolean;
}

/** Plain text fields, sent as typed (the API trims and bounds them). */
export const TEXT_FIELDS = [
  'name',
  'description',
  'systemPrompt',
  'firstMessage',
  'llmProvider',
  'llmModel',
  'ttsProvider',
  'voiceId',
  'language',
] as const;

type Json = Record<string, unknown>;
const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** `{{name}}` defaults as lines of `name=default`. */
const variablesText = (v: Agent['variables']) =>
  v
    ? Object.entries(v)
        .map(([k, d]) => `${k}=${d.default}`)
        .join('\n')
    : '';

export function initialState(a: Agent | undefined, analysis?: Json): FormState {
  const t: Record<string, string> = { ttsProvider: 'default', collectionId: '' };
  if (a) for (const k of TEXT_FIELDS) t[k] = str(a[k]);
  const tt = a?.turnTaking;
  const speaking = tt?.interruption?.speaking as Json | undefined;
  Object.assign(t, {
    temperature: str(a?.temperature),
    maxTokens: str(a?.maxTokens),
    collectionId: str(a?.collectionId),
    goodbyeMessage: str(a?.goodbyeMessage),
    variables: variablesText(a?.variables),
    ttsModel: str(a?.ttsModel),
    speed: str(a?.styleProfile?.speed),
    pitch: str(a?.styleProfile?.pitch),
    tools: a?.tools.length ? JSON.stringify(a.tools, null, 2) : '',
    metadata: a && Object.keys(a.metadata).length ? JSON.stringify(a.metadata, null, 2) : '',
    voicemailAction: str(a?.voicemail?.action),
    voicemailMessage: str(a?.voicemail?.message),
    detector: str(tt?.detector?.name),
    interruption: str(tt?.interruption?.name),
    bargeInMinMs: str(speaking?.minMs),
    endpointingMs: str(tt?.endpointingMs),
    eagerness: str(tt?.eagerness),
    preemptive: tt?.preemptive === undefined ? '' : String(tt.preemptive),
    maxCredits: str(a?.maxCredits),
    maxDurationSeconds: str(a?.maxDurationSeconds),
    successCriteria: str(analysis?.successCriteria),
    structuredSchema: analysis?.structuredData
      ? JSON.stringify((analysis.structuredData as Json).schema ?? {}, null, 2)
      : '',
  });
  return {
    text: t,
    endCall: a?.callTools?.endCall ?? false,
    transfers: (a?.callTools?.transferTargets ?? []).map((x) => ({ ...x })),
    inputProcessors: (a?.audio?.inputProcessors ?? []).map((p) => p.name),
    analysisSummary: analysis?.summary === true,
  };
}

/** A JSON text field that is not JSON: said under that field, before anything is sent. */
export class FieldInputError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

function json(param: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new FieldInputError(param, 'This is not valid JSON.');
  }
}

/** A number field: the number, or the text itself when it is not one (the API then says what is wrong). */
const num = (v: string) => (v.trim() === '' ? undefined : Number.isFinite(Number(v)) ? Number(v) : v);

/** Drops undefined values, and the object itself when nothing is left. */
function compact(o: Json): Json | undefined {
  const out = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return Object.keys(out).length ? out : undefined;
}

export interface BodyOptions {
  /** Editing an existing agent: cleared fields are sent as null (or their empty value). */
  editing: Agent | undefined;
  withCollection: boolean;
  withAnalysis: boolean;
}

export function toBody(s: FormState, o: BodyOptions): Json {
  const t = s.text;
  const a = o.editing;
  const body: Json = {};
  // Sets `k` when it has a value; on edit, clears it (null) when it had one.
  const put = (k: string, v: unknown, had: unknown) => {
    if (v !== undefined) body[k] = v;
    else if (a && had !== undefined && had !== null) body[k] = null;
  };
  for (const k of TEXT_FIELDS) if (t[k] !== undefined && (t[k] !== '' || a)) body[k] = t[k];
  for (const k of ['temperature', 'maxTokens'] as const) if (t[k]) body[k] = num(t[k]!);
  if (o.withCollection) body.collectionId = t.collectionId || null;
  put('goodbyeMessage', t.goodbyeMessage?.trim() || undefined, a?.goodbyeMessage);
  put('ttsModel', t.ttsModel?.trim() || undefined, a?.ttsModel);

  const vars = (t.variables ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const i = l.indexOf('=');
      return i < 0 ? [l, { default: '' }] : [l.slice(0, i).trim(), { default: l.slice(i + 1).trim() }];
    });
  put('variables', vars.length ? Object.fromEntries(vars) : undefined, a?.variables);

  put(
    'styleProfile',
    compact({ ...(a?.styleProfile ?? {}), speed: num(t.speed ?? ''), pitch: num(t.pitch ?? '') }),
    a?.styleProfile,
  );

  if (t.tools?.trim()) body.tools = json('tools', t.tools);
  else if (a?.tools.length) body.tools = [];
  if (t.metadata?.trim()) body.metadata = json('metadata', t.metadata);
  else if (a && Object.keys(a.metadata).length) body.metadata = {};

  const action = t.voicemailAction;
  put(
    'voicemail',
    action ? compact({ action, message: t.voicemailMessage?.trim() || undefined }) : undefined,
    a?.voicemail,
  );
  put(
    'callTools',
    s.endCall || s.transfers.length
      ? {
          endCall: s.endCall,
          transferTargets: s.transfers.map((r) => compact({ ...r, description: r.description || undefined })),
        }
      : undefined,
    a?.callTools,
  );

  const prevTurn = (a?.turnTaking ?? {}) as Json;
  const interruption = t.interruption
    ? compact({
        ...((prevTurn.interruption as Json | undefined)?.name === t.interruption
          ? (prevTurn.interruption as Json)
          : {}),
        name: t.interruption,
        speaking: t.bargeInMinMs ? { minMs: num(t.bargeInMinMs) } : undefined,
      })
    : undefined;
  put(
    'turnTaking',
    compact({
      ...prevTurn,
      endpointingMs: num(t.endpointingMs ?? ''),
      eagerness: t.eagerness || undefined,
      preemptive: t.preemptive ? t.preemptive === 'true' : undefined,
      detector: t.detector ? { name: t.detector } : undefined,
      interruption,
    }),
    a?.turnTaking,
  );
  put(
    'audio',
    s.inputProcessors.length
      ? // A processor kept keeps its options (a high-pass filter's cutoffHz): the form shows only the names.
        {
          inputProcessors: s.inputProcessors.map(
            (name) => a?.audio?.inputProcessors?.find((p) => p.name === name) ?? { name },
          ),
        }
      : undefined,
    a?.audio,
  );

  put('maxCredits', num(t.maxCredits ?? ''), a?.maxCredits);
  put('maxDurationSeconds', num(t.maxDurationSeconds ?? ''), a?.maxDurationSeconds);

  if (o.withAnalysis) {
    const prev = (a as unknown as Json | undefined)?.analysis;
    put(
      'analysis',
      compact({
        summary: s.analysisSummary || undefined,
        successCriteria: t.successCriteria?.trim() || undefined,
        structuredData: t.structuredSchema?.trim()
          ? { schema: json('analysis.structuredData', t.structuredSchema) }
          : undefined,
      }),
      prev,
    );
  }
  return body;
}
