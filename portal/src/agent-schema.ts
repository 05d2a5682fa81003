import { useAsync } from './ui.tsx';

/**
 * What the agent form reads from the API's own OpenAPI document (`/openapi.json`, generated from the zod contracts)
 * instead of a copy in the bundle: the turn-taking catalogues (turn detectors, interruption detectors, input
 * processors: each implementation's name and description) and whether a field exists at all (the Analysis group
 * appears once the API has `analysis`). zod itself never reaches the bundle.
 */
export interface Choice {
  name: string;
  description: string;
}
export interface AgentSchemaInfo {
  detectors: Choice[];
  interruptions: Choice[];
  inputProcessors: Choice[];
  /** Names of the fields POST /v1/agents accepts. */
  fields: Set<string>;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' ? (v as Json) : {});

/** `{oneOf: [{properties: {name: {enum: [n]}}, description}]}` → its names and descriptions. */
function choices(schema: unknown): Choice[] {
  const options = obj(schema).oneOf;
  if (!Array.isArray(options)) return [];
  return options.flatMap((o) => {
    const name = (obj(obj(obj(o).properties).name).enum as unknown[] | undefined)?.[0];
    return typeof name === 'string' ? [{ name, description: String(obj(o).description ?? '') }] : [];
  });
}

/** Reads the create-agent body's schema out of an OpenAPI document. */
export function agentSchemaInfo(doc: unknown): AgentSchemaInfo {
  const components = obj(obj(obj(doc).components).schemas);
  const deref = (s: unknown): Json => {
    const ref = obj(s).$ref;
    return typeof ref === 'string' ? obj(components[ref.split('/').pop()!]) : obj(s);
  };
  const post = obj(obj(obj(obj(doc).paths)['/v1/agents']).post);
  const body = deref(obj(obj(obj(obj(post.requestBody).content)['application/json']).schema));
  const props = obj(body.properties);
  const turn = obj(deref(props.turnTaking).properties);
  const audio = obj(deref(props.audio).properties);
  return {
    detectors: choices(turn.detector),
    interruptions: choices(turn.interruption),
    inputProcessors: choices(obj(audio.inputProcessors).items),
    fields: new Set(Object.keys(props)),
  };
}

let cached: Promise<AgentSchemaInfo> | null = null;

/** The agent schema, fetched once per page load (the document does not change while the server runs). */
export function useAgentSchema() {
  return useAsync(() => {
    cached ??= fetch('/openapi.json', { credentials: 'same-origin' })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`openapi.json: ${r.status}`))))
      .then(agentSchemaInfo)
      .catch((e: unknown) => {
        cached = null;
        throw e;
      });
    return cached;
  });
}
