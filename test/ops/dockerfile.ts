/** A Dockerfile instruction after joining continuation lines: `RUN apt-get …`, with its stage. */
export interface Instruction {
  op: string;
  args: string;
  stage: string;
  line: number;
}

export interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

/**
 * Parses a Dockerfile into stages (enough for static checks: instructions, continuation lines, comments, stage
 * names). Global ARGs before the first FROM land in a stage named "(global)".
 */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [{ name: '(global)', from: '', instructions: [] }];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let raw = lines[i]!;
    if (/^\s*(#|$)/.test(raw)) continue;
    while (raw.trimEnd().endsWith('\\') && i + 1 < lines.length) {
      raw = raw.trimEnd().slice(0, -1) + ' ';
      i++;
      while (i < lines.length && /^\s*#/.test(lines[i]!)) i++; // comments inside a continuation are dropped
      raw += (lines[i] ?? '').trim();
    }
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(raw);
    if (!m) throw new Error(`line ${start + 1}: not an instruction: ${raw}`);
    const op = m[1]!.toUpperCase();
    const args = m[2]!.trim();
    if (op === 'FROM') {
      const f = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!f) throw new Error(`line ${start + 1}: bad FROM`);
      stages.push({ name: f[2] ?? String(stages.length - 1), from: f[1]!, instructions: [] });
    }
    const stage = stages.at(-1)!;
    stage.instructions.push({ op, args, stage: stage.name, line: start + 1 });
  }
  return stages;
}

/** Resolves ${NAME} / $NAME from ARG defaults (global ones, then the stage's). */
export function expandArgs(value: string, args: Record<string, string>): string {
  return value.replace(
    /\$\{(\w+)\}|\$(\w+)/g,
    (_m, a: string | undefined, b: string | undefined) => args[a ?? b!] ?? '',
  );
}

export function argDefaults(stage: Stage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of stage.instructions.filter((x) => x.op === 'ARG')) {
    const [name, value] = i.args.split('=', 2);
    if (name && value !== undefined) out[name] = value.replace(/^"|"$/g, '');
  }
  return out;
}
