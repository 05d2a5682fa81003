// Summarises V8 .cpuprofile files written by `--cpu-prof DIR`: the top self-time functions and the top inclusive
// functions, summed over every profile given (the platform's processes). Self time of library and builtin frames is
// also charged to the nearest project frame above them, which is what says which of our code to change.
//
//   npx tsx benchmarks/voice-latency/profile-summary.ts [--top N] [--min-ms M] DIR_OR_FILE...
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, 'min-ms': { type: 'string', default: '0' } },
});
const TOP = Number(values.top);

const files = positionals.flatMap((p) =>
  statSync(p).isDirectory()
    ? readdirSync(p)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(p, f))
    : [p],
);

/** A frame's label: function, file (from the project root when it is ours) and line. */
function label(f: CallFrame): string {
  const name = f.functionName || '(anonymous)';
  if (!f.url) return name;
  const path = f.url.replace(/^file:\/\//, '');
  const ours = /\/(api|shared|workers|support|benchmarks)\//.exec(path);
  const short = ours ? path.slice(ours.index + 1) : path.replace(/^.*node_modules\//, 'nm:');
  return `${name} ${short}:${f.lineNumber + 1}`;
}

function isProject(f: CallFrame): boolean {
  return /\/(api|shared|workers|support)\//.test(f.url) && !f.url.includes('node_modules');
}

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const charged = new Map<string, number>();
let busy = 0;
let idle = 0;

for (const file of files) {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const perNode = new Map<number, number>();
  prof.samples.forEach((id, i) => perNode.set(id, (perNode.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0) / 1000));
  for (const [id, ms] of perNode) {
    const node = byId.get(id);
    if (!node) continue;
    const name = node.callFrame.functionName;
    if (name === '(idle)' || name === '(program)') {
      idle += name === '(idle)' ? ms : 0;
      if (name === '(idle)') continue;
    }
    busy += ms;
    const l = label(node.callFrame);
    self.set(l, (self.get(l) ?? 0) + ms);
    // Inclusive: once per distinct label on the stack (recursion counted once).
    const seen = new Set<string>();
    let ownerFound = false;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur)?.callFrame;
      if (!frame) break;
      const fl = label(frame);
      if (!seen.has(fl)) {
        seen.add(fl);
        inclusive.set(fl, (inclusive.get(fl) ?? 0) + ms);
      }
      if (!ownerFound && isProject(frame)) {
        ownerFound = true;
        charged.set(fl, (charged.get(fl) ?? 0) + ms);
      }
    }
    if (!ownerFound) charged.set(`(no project frame) ${l}`, (charged.get(`(no project frame) ${l}`) ?? 0) + ms);
  }
}

function print(title: string, m: Map<string, number>): void {
  console.log(`\n${title}`);
  const rows = [...m].filter(([, ms]) => ms >= Number(values['min-ms'])).sort((a, b) => b[1] - a[1]);
  for (const [l, ms] of rows.slice(0, TOP))
    console.log(`${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / busy).toFixed(1).padStart(5)} %  ${l}`);
}

console.log(`${files.length} profile(s): busy ${busy.toFixed(0)} ms, idle ${idle.toFixed(0)} ms`);
print('self time', self);
print('self time charged to the nearest project frame', charged);
print('inclusive time', inclusive);
