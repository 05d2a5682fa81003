import { END_REASON_WORDS, type LimitEndReason } from '../../contracts/end-reasons.ts';
import type { RootCauseIssue, SessionEndReason } from '../../contracts/sessions.ts';
import type { InterruptionRow, ToolRow, TurnRow } from './session-trace.ts';

/** What the root-cause rules read about a session: its rows of rt_turns, rt_tool_executions, rt_interruptions. */
export type TraceTurn = Pick<
  TurnRow,
  | 'idx'
  | 'speaker'
  | 'text'
  | 'start_ms'
  | 'end_ms'
  | 'stt_ms'
  | 'llm_ms'
  | 'tts_ms'
  | 'latency_ms'
  | 'endpoint_ms'
  | 'interrupted'
  | 'error'
> &
  Partial<Pick<TurnRow, 'overhead_ms'>>;
export type TraceTool = Omit<ToolRow, 'at_ms'>;
export type TraceInterruption = Omit<InterruptionRow, 'detection_ms'>;

/** Thresholds (ms) of the rules; the contract's targets are 1.5 s first response and 900 ms per turn. */
export const RULES = {
  firstResponseMs: 1500,
  turnLatencyMs: 900,
  sttMs: 400,
  llmFirstTokenMs: 700,
  ttsFirstAudioMs: 300,
  toolMs: 2000,
  silenceMs: 8000,
  stopMs: 300,
  repeatedInterruptions: 3,
} as const;

/**
 * Root-cause rules over one session's trace. Each issue names the turn, what happened and what to change.
 * Order: per turn in order, then session-wide findings.
 */
export function rootCause(
  turns: TraceTurn[],
  tools: TraceTool[],
  interruptions: TraceInterruption[],
  session: { endReason: SessionEndReason | null } = { endReason: null },
): RootCauseIssue[] {
  const issues: RootCauseIssue[] = [];
  const add = (type: string, turn: number, description: string, recommendation: string) =>
    issues.push({ type, turn, description, recommendation });
  let firstAssistantAnswered = false;
  let prevEnd: number | null = null;

  for (const t of turns) {
    if (prevEnd !== null && t.start_ms - prevEnd > RULES.silenceMs) {
      add(
        'long_silence',
        t.idx,
        `${Math.round((t.start_ms - prevEnd) / 1000)} s of silence before this turn.`,
        t.speaker === 'assistant'
          ? 'The agent was silent too long: check the LLM/TTS providers and tool timeouts, and speak a filler while tools run.'
          : 'The caller was silent: have the agent re-prompt after a few seconds of silence, and check that the line carries audio.',
      );
    }
    prevEnd = Math.max(prevEnd ?? 0, t.end_ms);

    if (t.speaker === 'user') {
      if (!t.text.trim()) {
        add(
          'empty_transcript',
          t.idx,
          'The caller spoke but the transcript is empty.',
          'Check that the STT provider handles 8 kHz telephone audio and the language, raise the VAD threshold if it was noise, and keep the endpointing long enough for whole words.',
        );
      }
      if (t.error)
        add(
          'stt_error',
          t.idx,
          `Transcription failed: ${t.error}.`,
          'Check the STT provider key and status; configure a fallback STT provider.',
        );
      continue;
    }

    // assistant
    const err = t.error ?? '';
    if (err.startsWith('llm')) {
      add(
        'llm_error',
        t.idx,
        `The LLM failed: ${err}.`,
        'Check the LLM provider key, model name and rate limits; keep the prompt within the context window.',
      );
    } else if (err.startsWith('tts')) {
      add(
        'tts_error',
        t.idx,
        `Speech synthesis failed: ${err}.`,
        'Check the TTS provider key and voiceId; fall back to the default engine.',
      );
    } else if (err) {
      add('pipeline_error', t.idx, `The turn failed: ${err}.`, 'See the service logs for this session id.');
    }
    if (t.latency_ms !== null) {
      const target = firstAssistantAnswered ? RULES.turnLatencyMs : RULES.firstResponseMs;
      if (t.latency_ms > target) {
        const stages: Array<[string, number, number, string]> = [
          ['stt', t.stt_ms ?? 0, RULES.sttMs, 'use a streaming STT with faster finals or a closer region'],
          [
            'llm',
            t.llm_ms ?? 0,
            RULES.llmFirstTokenMs,
            'use a faster model, a shorter system prompt or fewer knowledge chunks',
          ],
          ['tts', t.tts_ms ?? 0, RULES.ttsFirstAudioMs, 'use a streaming TTS engine and keep the first sentence short'],
        ];
        const slowest = stages.reduce((a, b) => (b[1] - b[2] > a[1] - a[2] ? b : a));
        add(
          `high_latency_${slowest[0]}`,
          t.idx,
          `Response took ${t.latency_ms} ms (target ${target} ms); slowest stage ${slowest[0]} at ${slowest[1]} ms.`,
          `Reduce ${slowest[0]} time: ${slowest[3]}.`,
        );
      } else {
        if ((t.llm_ms ?? 0) > RULES.llmFirstTokenMs)
          add('slow_llm', t.idx, `LLM first token after ${t.llm_ms} ms.`, 'Use a faster model or a shorter prompt.');
        if ((t.tts_ms ?? 0) > RULES.ttsFirstAudioMs)
          add('slow_tts', t.idx, `First audio after ${t.tts_ms} ms of synthesis.`, 'Use a streaming TTS engine.');
      }
      firstAssistantAnswered = true;
    }
    if ((t.stt_ms ?? 0) > RULES.sttMs && (t.latency_ms ?? 0) <= RULES.turnLatencyMs) {
      add(
        'slow_stt',
        t.idx,
        `Final transcript ${t.stt_ms} ms after the end of speech.`,
        'Use a streaming STT provider with faster finals.',
      );
    }
  }

  for (const tool of tools) {
    if (!tool.ok) {
      add(
        'tool_error',
        tool.turn_idx,
        `Tool "${tool.name}" failed: ${tool.error ?? 'error'}.`,
        'Check the tool endpoint and its response; the agent answered without its result.',
      );
    } else if (tool.duration_ms > RULES.toolMs) {
      add(
        'slow_tool',
        tool.turn_idx,
        `Tool "${tool.name}" took ${tool.duration_ms} ms.`,
        'Speed up the tool endpoint or have the agent say a filler while it runs.',
      );
    }
  }

  for (const i of interruptions) {
    if (i.stop_ms > RULES.stopMs) {
      add(
        'slow_barge_in',
        i.turn_idx,
        `Agent audio stopped ${i.stop_ms} ms after the barge-in was detected.`,
        'Check the realtime pod CPU load; the clear message must go out at once.',
      );
    }
  }
  if (interruptions.length >= RULES.repeatedInterruptions) {
    add(
      'repeated_interruptions',
      interruptions[RULES.repeatedInterruptions - 1]!.turn_idx,
      `The caller interrupted the agent ${interruptions.length} times.`,
      'Make replies shorter (lower maxTokens, ask the prompt for one or two sentences) and check for echo on the line triggering barge-in.',
    );
  }
  if (session.endReason === 'worker-lost') {
    add(
      'worker_lost',
      turns.at(-1)?.idx ?? 0,
      'The realtime process running this call stopped mid-call (a crash, an out-of-memory kill or an eviction): the call was cut off after this turn.',
      "Check the realtime pods' restarts and last state (OOMKilled?) and their memory limits; the recording keeps all but the last few seconds.",
    );
  }
  const limit = session.endReason;
  // A call where the agent spoke and no caller turn was ever taken (issue 31: a noisy line whose hiss was "speech"
  // left the call silent with no root cause at all). Not when a cap or a lost worker already explains the end.
  if (
    turns.some((t) => t.speaker === 'assistant') &&
    !turns.some((t) => t.speaker === 'user') &&
    !(limit && (limit in LIMIT_ADVICE || limit === 'worker-lost'))
  ) {
    add(
      'no_caller_speech',
      turns.at(-1)!.idx,
      'No caller speech was detected: the agent spoke, and no caller turn was ever taken.',
      "Listen to the recording's caller leg: a silent or one-way line points at the carrier or the caller's device; " +
        'on a noisy line the VAD gates against its tracked noise floor, but background voices (a TV, a crowd) keep ' +
        'it in speech so no turn ends (docs/realtime.md, "Noisy lines"); a caller who never answered is no fault.',
    );
  }
  if (limit && limit in LIMIT_ADVICE) {
    add(
      'call_limit',
      turns.at(-1)?.idx ?? 0,
      `${END_REASON_WORDS[limit]} (end reason ${limit}): the platform ended the call after its goodbye, not the caller.`,
      LIMIT_ADVICE[limit as LimitEndReason],
    );
  }
  return issues;
}

/** What to change when a cap or the balance ended the call. */
const LIMIT_ADVICE: Record<LimitEndReason, string> = {
  'max-duration': "Raise the agent's maxDurationSeconds (or the session's) if calls need longer.",
  'max-credits': "Raise the agent's maxCredits (or the session's): it must cover every reply plus the closing message.",
  'daily-cap': 'Raise the daily spending cap (account or API key), or wait for the cap window to roll over.',
  balance: 'Add credits: the balance could not fund the next reply.',
};
