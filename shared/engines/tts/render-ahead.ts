import { isEngineError } from '../../kernel/errors/engine-error.ts';

/** Renders one piece of text to PCM; `first` is the piece someone waits for, the rest are rendered ahead. */
export type RenderPiece = (text: string, first: boolean, signal: AbortSignal) => Promise<Buffer>;

/**
 * Streams the audio of `pieces` (text-chunks.ts) for engines that render a whole utterance before answering (flite,
 * RHVoice): the next piece is rendered while the current one is sent, and the controller stops it if the consumer
 * stops early. A piece stopped at its CPU deadline fails with the share of the text worked through (withWorkDone).
 */
export async function* renderAhead(
  pieces: string[],
  render: RenderPiece,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  const ac = new AbortController();
  const onAbort = () => ac.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const start = (text: string, first: boolean) => {
    const p = render(text, first, ac.signal);
    p.catch(() => {});
    return p;
  };
  try {
    let next = start(pieces[0]!, true);
    for (let i = 0; i < pieces.length; i++) {
      const current = await next.catch((e: unknown) => {
        throw withWorkDone(e, pieces, i);
      });
      if (i + 1 < pieces.length) next = start(pieces[i + 1]!, false);
      if (current.length) yield current;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    ac.abort();
  }
}

/**
 * A piece stopped at its CPU deadline (`too_costly`) was work the text caused: the error carries the share of the
 * text up to and including that piece, which the caller charges instead of refunding.
 */
function withWorkDone(e: unknown, pieces: string[], failed: number): unknown {
  if (!isEngineError(e) || e.problem !== 'too_costly') return e;
  const chars = (n: number) => pieces.slice(0, n).reduce((sum, p) => sum + p.length, 0);
  e.workDone = chars(failed + 1) / chars(pieces.length);
  return e;
}
