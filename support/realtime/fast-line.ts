/**
 * The far end's media clock for a test call whose subject is not how long the audio lasts (an outcome, a setting,
 * a record, a campaign's bookkeeping): four times real time. The caller's frames and the playout of the agent's
 * audio (so its marks) both go at that speed (shared/domains/agent-tests/far-end.ts); the platform times speech by
 * its audio and playout by the marks, so the call is the same call, heard on a faster line. Tests of timing itself
 * (barge-in, endpointing windows, latency, idle and duration limits) keep real-time lines.
 * Four: the suite's call tests pass at it on a loaded 2-core machine (load 10-20), and a call is then bounded by the
 * platform's own work (LLM double, synthesis, database) more than by the audio.
 * Only where the call's STT is a double: the local recogniser decodes on the CPU and falls behind a line faster than
 * real time (its final then comes after the turn's wait), so calls on local STT gain nothing and keep the real line
 * (test/billing/realtime-reservations.test.ts took longer on a fast line, 4 s -> 8 s a call).
 * Nor where the detector hears a machine's beep (the decision's write, without the beep, and the beep's are not
 * ordered, and a fast line brings them together: beep_at_ms was lost with two busy loops beside the run); and not
 * where money is the subject, the calls' minutes being wall time (campaigns stay on real-time lines by default). A
 * callee's "Hello?" whose final comes after the detector's decision (on a fast line, or from a slow vendor) is no
 * longer a race: speech that ended before the answer is not a turn (test/realtime/phone-calls.test.ts).
 */
export const FAST_LINE = 4;

/**
 * A far end that plays the agent's audio this many times faster than real time while the caller still speaks in
 * real time (far-end.ts `playout`): for calls whose subject is what was said and left, where the caller's turns must
 * be recorded where they were said (the platform maps the caller's audio to the session's clock as a real-time
 * line), as the agent-test runner's results are (each recorded turn is the scenario turn it was said in). The waits
 * for the agent's replies to play out are what it shortens.
 */
export const FAST_PLAYOUT = 4;
