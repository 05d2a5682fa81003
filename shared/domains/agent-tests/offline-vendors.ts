import { startDeepgramLiveDouble, type DeepgramLiveDouble } from './simulators/deepgram-live.ts';
import { startOpenAiChatDouble, type OpenAiChatDouble } from './simulators/openai-chat.ts';
import type { ScriptedReply } from './simulators/llm-script.ts';
import type { Scenario } from '../../contracts/agent-tests.ts';

/**
 * The vendors of an offline agent-test run, as local servers on port 0 speaking the vendors' wire protocols, so
 * the platform's own Deepgram and OpenAI adapters run unchanged:
 * - the scripted LLM (OpenAI Chat Completions, streamed): the scenario's `llm.replies`, one per turn of the conversation, in order (a dropped, re-asked request gets the same one);
 * - the simulated STT (Deepgram live): it transcribes the scenario's own text on the audio's clock (each stretch of
 *   caller speech is the next scripted segment, finalized after a short silence), not the audio's words; a
 *   backchannel the caller says over the agent is heard as its own word (`hearBackchannel`).
 * Both are labelled as such in every result. Scenarios run one at a time against one set of vendors: `use` points
 * them at the next scenario.
 */
export const SCRIPTED_LLM_LABEL = 'scripted (llm.replies, OpenAI-protocol double)';
export const SIMULATED_STT_LABEL = 'simulated (scenario text on the audio clock, Deepgram-protocol double)';

/**
 * Speech is audio above this RMS on a clean line (a μ-law line's idle hiss and flite's quietest syllables sit under
 * it); on a noisy line, also `OVER_NOISE_DB` over the line's noise (paced-speech.ts).
 */
const STT_ENERGY_THRESHOLD = 300;

export interface OfflineVendors {
  /** Platform env that routes its STT and LLM to these servers. */
  env: Record<string, string>;
  /**
   * Points the vendors at the next scenario: its LLM replies, its caller's lines, and the noise its line carries (RMS;
   * 0 = a clean line): the simulated STT hears speech relative to that noise, as a real recogniser does, so a
   * scenario at 10–20 dB SNR tests the platform, not the simulator's energy threshold.
   */
  use(scenario: Scenario, lines: string[], lineNoiseRms?: number): void;
  /**
   * The caller's lines the simulated STT has begun to hear in the current scenario (its turns' speech, not
   * backchannels): turn k was heard by it only if this is more than k.
   */
  readonly linesHeard: number;
  /**
   * The caller is saying a backchannel: speech the simulated STT begins to hear from now on is that word, not the
   * script's next line, until the caller is done with backchannels (null: before it speaks its next turn). Out of
   * band, so that a backchannel the STT misses (lost, under the noise) or hears as two stretches shifts no turn.
   */
  hearBackchannel(word: string | null): void;
  /** LLM requests answered for the current scenario, and the tool calls it scripted. */
  readonly llmRequests: number;
  close(): Promise<void>;
}

export async function startOfflineVendors(): Promise<OfflineVendors> {
  let replies: NonNullable<Scenario['llm']>['replies'] = [];
  let lines: string[] = [];
  let requests = 0;
  let backchannel: string | null = null;
  /** Script lines taken so far by each STT connection: only a turn's speech takes one, never a backchannel. */
  const linesTaken = new Map<number, number>();
  // The reply is chosen by the conversation it answers, not by how many requests came: a reply prepared on an
  // interim transcript and dropped when the caller went on asks again for the same turn, and must get the same
  // scripted reply. Each user or tool message answered so far moves the script one step (users + tools − 1).
  const answer = (body: Record<string, unknown>): ScriptedReply => {
    requests++;
    const messages = Array.isArray(body.messages) ? (body.messages as { role?: string }[]) : [];
    const i = Math.max(0, messages.filter((m) => m.role === 'user' || m.role === 'tool').length - 1);
    const r = replies[Math.min(i, replies.length - 1)];
    if (r === undefined)
      return { status: 500, errorBody: { error: { message: 'no scripted reply', type: 'server_error' } } };
    // Past the end of the script a tool call is not repeated: the last text reply is.
    if (i >= replies.length && typeof r !== 'string') {
      const text = replies.findLast((x) => typeof x === 'string');
      return { text: typeof text === 'string' ? text : 'Okay.' };
    }
    return typeof r === 'string' ? { text: r } : { toolCalls: [{ name: r.tool, arguments: r.args }] };
  };
  // No key check on either server: a platform may send a developer's own stored key (it never leaves the process).
  const llm: OpenAiChatDouble = await startOpenAiChatDouble((body) => answer(body), {
    firstTokenMs: 150,
    tokensPerSecond: 60,
  });
  const stt: DeepgramLiveDouble = await startDeepgramLiveDouble({
    key: 'agent-tests-simulated-stt',
    anyKey: true,
    energyThreshold: STT_ENERGY_THRESHOLD,
    script: (conn) => {
      if (backchannel !== null) return backchannel;
      const u = linesTaken.get(conn) ?? 0;
      linesTaken.set(conn, u + 1);
      return lines[u] ?? '';
    },
  });
  return {
    env: {
      DEEPGRAM_BASE_URL: stt.url,
      DEEPGRAM_API_KEY: stt.key,
      OPENAI_BASE_URL: llm.baseUrl,
      OPENAI_API_KEY: llm.key,
    },
    use(scenario, next, lineNoiseRms = 0) {
      replies = scenario.llm?.replies ?? [];
      lines = next;
      backchannel = null;
      linesTaken.clear();
      stt.setWordErrorRate(scenario.impairments?.sttWordErrorRate ?? 0);
      stt.setLineNoise(lineNoiseRms);
      requests = 0;
    },
    hearBackchannel(word) {
      backchannel = word;
    },
    get llmRequests() {
      return requests;
    },
    get linesHeard() {
      return Math.max(0, ...linesTaken.values());
    },
    async close() {
      await llm.close();
      await stt.close();
    },
  };
}
