import type { ToolCallRecord, ToolCallView } from '../../contracts/agents.ts';
import { ifSet } from '../../contracts/absent.ts';

/** A recorded tool call as the API shows it: `result` and `error` left out when unset (stored records keep null). */
export function toToolCallView(c: ToolCallRecord): ToolCallView {
  const { result, error, ...rest } = c;
  return { ...rest, ...ifSet('result', result), ...ifSet('error', error) };
}
