/**
 * The mark that ends a reply on the wire (docs/realtime.md, "Marks"): after a reply's last sentence and its own mark,
 * once the reply is complete (its text is done: `llm-done`), the platform sends one more mark, `<turn>:end`. A far
 * end echoes marks once the audio before them has played, so the echo of this one says that the whole reply has
 * played. The agent-test runner waits for it instead of guessing from silence. Zod-free: the far ends (the runner's
 * callers, the portal) may import it.
 */
const SUFFIX = ':end';

export function replyEndMark(turnId: string): string {
  return turnId + SUFFIX;
}

/** True for a reply's end mark; false for a sentence's (`<turn>:<index>`, `<turn>:<index>:r<n>` after a resume). */
export function isReplyEndMark(name: string): boolean {
  return name.endsWith(SUFFIX);
}
