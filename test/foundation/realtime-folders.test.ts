import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { folderGraph, loops, tsFiles } from '../../support/helpers/folder-graph.ts';

/**
 * workers/realtime/ imports one way (docs/realtime.md, "Folders, in one direction"):
 *
 *   the root files, twilio/, direct/   routes, admission, transports               (3)
 *   call/                              a call's lifecycle; builds the pipeline     (2)
 *   pipeline/<family>/                 input, turn, answer, output: stages + helpers (1)
 *   pipeline/ (its own files)          frames, Stage, conversation, playback…      (0)
 *
 * The rule enforced: an import goes to a folder of the same rank or a lower one, and the folder graph has no loop
 * (so two families may depend one way, never both ways). pipeline/'s own files are one folder, apart from its
 * families: a family may import them, they may import no family. A file directly in workers/realtime/ is its own
 * folder (routes.ts imports twilio/, twilio/ imports idle-watch.ts: no loop).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REALTIME = 'workers/realtime/';

/** The folder of a repository path under workers/realtime/, at the depth the rule is about. */
function folderOf(path: string): string {
  const parts = path.slice(REALTIME.length).split('/');
  if (parts[0] === 'pipeline') return parts.length > 2 ? `pipeline/${parts[1]}` : 'pipeline';
  return parts.length > 1 ? parts[0]! : parts.join('/');
}

function rank(folder: string): number {
  if (folder === 'pipeline') return 0;
  if (folder.startsWith('pipeline/')) return 1;
  if (folder === 'call') return 2;
  return 3;
}

/** Imports that go up a rank: `from → to`. */
function upward(graph: Map<string, Set<string>>): string[] {
  return [...graph].flatMap(([from, tos]) =>
    [...tos].filter((to) => rank(to) > rank(from)).map((to) => `${from} → ${to}`),
  );
}

const graph = () => folderGraph(ROOT, tsFiles(join(ROOT, REALTIME)), folderOf, (p) => p.startsWith(REALTIME));

describe('workers/realtime/ folders', () => {
  it('has no loop between its folders', () => {
    const g = graph();
    // The tree is what the rule is about: call/ over pipeline/ over the families, each present.
    expect([...g.keys()]).toEqual(
      expect.arrayContaining(['call', 'pipeline/input', 'pipeline/turn', 'pipeline/answer']),
    );
    expect(loops(g)).toEqual([]);
  });

  it('imports only its own rank or lower: transports → call/ → pipeline families → pipeline/', () => {
    expect(upward(graph())).toEqual([]);
  });

  it('reports a pipeline/ file importing a family, and a family importing call/', () => {
    const g = new Map([
      ['pipeline', new Set(['pipeline/turn'])],
      ['pipeline/turn', new Set(['pipeline', 'call'])],
      ['call', new Set(['pipeline/turn'])],
    ]);
    expect(upward(g)).toEqual(['pipeline → pipeline/turn', 'pipeline/turn → call']);
    expect(loops(g)).toEqual([['call', 'pipeline', 'pipeline/turn']]);
  });

  it('names folders at the depth of the rule', () => {
    expect(folderOf('workers/realtime/pipeline/frames.ts')).toBe('pipeline');
    expect(folderOf('workers/realtime/pipeline/turn/turn-stage.ts')).toBe('pipeline/turn');
    expect(folderOf('workers/realtime/call/call-session.ts')).toBe('call');
    expect(folderOf('workers/realtime/routes.ts')).toBe('routes.ts');
  });
});
