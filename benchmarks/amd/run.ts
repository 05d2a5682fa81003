import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  AnsweringMachineDetector,
  type AmdDecision,
  type MessageEnd,
} from '../../shared/domains/realtime/amd/detector.ts';
import { buildCorpus, type Clip, type CorpusSet, type Kind } from './corpus.ts';

/**
 * bench:amd — accuracy and time-to-decision of the answering-machine detector on synthetic greetings
 * (benchmarks/amd/corpus.ts). The detector gets each clip as a call delivers it: 20 ms frames from the answer on.
 * Targets and their reasons: README.md.
 *
 *   npm run bench:amd                       both sets (base, then wide)
 *   npm run bench:amd -- --set wide         one set
 *   npm run bench:amd -- --cache /tmp/amd   keep the generated clips there and reuse them (same set, same clips)
 */
const TARGETS = {
  /** Humans taken for a machine: the agent would hang up on a person, the costliest error. */
  humanAsMachinePct: 5,
  machineRecallPct: 90,
  /** A person hears nothing until the decision: from the end of their greeting. */
  humanDecisionAfterSpeechP95Ms: 1200,
  /** Before a long greeting ends (the shortest run ~5 s), so the hang-up or the wait for the beep starts in time;
   *  3500 until the detector looked longer before taking a long greeting for a machine (README). */
  machineDecisionP95Ms: 4500,
  beepRecallPct: 95,
  /** A voicemail message should start right after the beep, not clipped and not after dead air. */
  messageAfterBeepP95Ms: 300,
};

interface Outcome {
  clip: Clip;
  decision: AmdDecision | null;
  end: MessageEnd | null;
  beepAtMs: number | null;
}

function run(clip: Clip): Outcome {
  const d = new AnsweringMachineDetector(8000);
  const frame = 160;
  for (let i = 0; i + frame <= clip.pcm.length && !d.finished; i += frame) d.push(clip.pcm.subarray(i, i + frame));
  return { clip, decision: d.decision, end: d.messageEnd, beepAtMs: d.beepAtMs };
}

function pct(xs: number[], p: number): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}
const fmt = (v: number | null, unit = ' ms') => (v === null ? '—' : `${Math.round(v)}${unit}`);
const mark = (ok: boolean) => (ok ? '✔' : '✘');

/** Generated clips, stored once per set under `dir` (the set is deterministic: reuse only saves the generation). */
async function clipsOf(set: CorpusSet, dir: string | undefined): Promise<Clip[]> {
  const file = dir ? join(dir, `${set}.json`) : null;
  if (file && existsSync(file)) {
    const stored = JSON.parse(await readFile(file, 'utf8')) as Array<Omit<Clip, 'pcm'> & { pcm: string }>;
    return stored.map((c) => {
      const b = Buffer.from(c.pcm, 'base64');
      return { ...c, pcm: new Int16Array(b.buffer, b.byteOffset, b.length >> 1) };
    });
  }
  const clips = await buildCorpus(set, (n) => n % 40 === 0 && process.stdout.write(`  generated ${n} clips\n`));
  if (file) {
    await mkdir(dir!, { recursive: true });
    const out = clips.map((c) => ({
      ...c,
      pcm: Buffer.from(c.pcm.buffer, c.pcm.byteOffset, c.pcm.byteLength).toString('base64'),
    }));
    await writeFile(file, JSON.stringify(out));
  }
  return clips;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { set: { type: 'string', default: 'both' }, cache: { type: 'string' } },
  });
  const sets: CorpusSet[] = values.set === 'both' ? ['base', 'wide'] : [values.set as CorpusSet];
  if (!sets.every((x) => x === 'base' || x === 'wide')) throw new Error('--set is base, wide or both');
  for (const set of sets) await report(set, values.cache);
}

async function report(set: CorpusSet, cache: string | undefined): Promise<void> {
  const t0 = performance.now();
  const clips = await clipsOf(set, cache);
  const genS = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  const outcomes = clips.map(run);
  const detS = (performance.now() - t1) / 1000;
  const audioS = clips.reduce((s, c) => s + c.pcm.length / 8000, 0);

  const kinds: Kind[] = ['human', 'voicemail-short', 'voicemail-long', 'screening'];
  console.log(
    `\nAMD benchmark, ${set} set: ${clips.length} clips (${audioS.toFixed(0)} s of audio), load average ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log(
    'kind             n   human machine unknown   decision p50 / p95 (from answer)   after greeting p50 / p95',
  );
  for (const k of kinds) {
    const os = outcomes.filter((o) => o.clip.kind === k);
    const count = (a: string) => os.filter((o) => (o.decision?.answeredBy ?? 'unknown') === a).length;
    const at = os.map((o) => o.decision?.atMs ?? NaN).filter(Number.isFinite);
    const after = os.map((o) => (o.decision?.atMs ?? NaN) - o.clip.speechEndMs).filter(Number.isFinite);
    console.log(
      `${k.padEnd(16)} ${String(os.length).padStart(2)}   ${String(count('human')).padStart(5)} ${String(count('machine')).padStart(7)} ${String(count('unknown')).padStart(7)}   ${fmt(pct(at, 50)).padStart(8)} / ${fmt(pct(at, 95)).padEnd(8)}                 ${fmt(pct(after, 50)).padStart(8)} / ${fmt(pct(after, 95))}`,
    );
  }
  const humans = outcomes.filter((o) => o.clip.expected === 'human');
  const machines = outcomes.filter((o) => o.clip.expected === 'machine');
  const correct = outcomes.filter((o) => o.decision?.answeredBy === o.clip.expected).length;
  const humanAsMachine = (100 * humans.filter((o) => o.decision?.answeredBy === 'machine').length) / humans.length;
  const machineRecall = (100 * machines.filter((o) => o.decision?.answeredBy === 'machine').length) / machines.length;
  const humanAfter = humans
    .filter((o) => o.decision?.answeredBy === 'human')
    .map((o) => o.decision!.atMs - o.clip.speechEndMs);
  const machineAt = machines.filter((o) => o.decision?.answeredBy === 'machine').map((o) => o.decision!.atMs);
  const beeped = machines.filter((o) => o.clip.beep);
  const beepFound = beeped.filter((o) => o.beepAtMs !== null && Math.abs(o.beepAtMs - o.clip.beep!.startMs) <= 200);
  const falseBeeps = outcomes.filter((o) => !o.clip.beep && o.beepAtMs !== null).length;
  const afterBeep = beepFound.filter((o) => o.end).map((o) => o.end!.atMs - o.clip.beep!.endMs);
  const noBeepEnd = machines.filter((o) => !o.clip.beep && o.end).map((o) => o.end!.atMs - o.clip.speechEndMs);
  const humanP95 = pct(humanAfter, 95);
  const machineP95 = pct(machineAt, 95);
  const beepRecall = beeped.length ? (100 * beepFound.length) / beeped.length : 100;
  const afterBeepP95 = pct(afterBeep, 95);

  console.log(
    `\naccuracy ${((100 * correct) / outcomes.length).toFixed(1)} % (${correct}/${outcomes.length}; unknown counts as wrong)`,
  );
  console.log('figure                                   measured        target');
  const row = (name: string, v: string, t: string, ok: boolean) =>
    console.log(`${name.padEnd(40)} ${v.padEnd(15)} ${t} ${mark(ok)}`);
  row(
    'humans taken for a machine',
    `${humanAsMachine.toFixed(1)} %`,
    `≤ ${TARGETS.humanAsMachinePct} %`,
    humanAsMachine <= TARGETS.humanAsMachinePct,
  );
  row(
    'machines detected',
    `${machineRecall.toFixed(1)} %`,
    `≥ ${TARGETS.machineRecallPct} %`,
    machineRecall >= TARGETS.machineRecallPct,
  );
  row(
    'human decision after greeting, p95',
    fmt(humanP95),
    `≤ ${TARGETS.humanDecisionAfterSpeechP95Ms} ms`,
    humanP95 !== null && humanP95 <= TARGETS.humanDecisionAfterSpeechP95Ms,
  );
  row(
    'machine decision from answer, p95',
    fmt(machineP95),
    `≤ ${TARGETS.machineDecisionP95Ms} ms`,
    machineP95 !== null && machineP95 <= TARGETS.machineDecisionP95Ms,
  );
  row(
    'beeps found (±200 ms)',
    `${beepFound.length}/${beeped.length}`,
    `≥ ${TARGETS.beepRecallPct} %`,
    beepRecall >= TARGETS.beepRecallPct,
  );
  row('false beeps (clips without one)', String(falseBeeps), '0', falseBeeps === 0);
  row(
    'message start after beep end, p95',
    fmt(afterBeepP95),
    `≤ ${TARGETS.messageAfterBeepP95Ms} ms`,
    afterBeepP95 !== null && afterBeepP95 <= TARGETS.messageAfterBeepP95Ms,
  );
  console.log(
    `${'message start after a beepless greeting'.padEnd(40)} p50 ${fmt(pct(noBeepEnd, 50))}, p95 ${fmt(pct(noBeepEnd, 95))}`,
  );
  const wrong = outcomes.filter((o) => o.decision?.answeredBy !== o.clip.expected);
  if (wrong.length) {
    console.log('\nmisclassified:');
    for (const o of wrong)
      console.log(
        `  ${o.clip.id} (${o.clip.kind}, greeting ${Math.round(o.clip.speechEndMs)} ms): ${o.decision?.answeredBy ?? 'none'} — ${o.decision?.reason ?? ''}`,
      );
  }
  console.log(
    `\ngeneration (or cache) ${genS.toFixed(1)} s; detection ${(detS * 1000).toFixed(0)} ms for ${audioS.toFixed(0)} s of audio (${((detS / audioS) * 1e6).toFixed(0)} µs CPU per audio second)`,
  );
}

main().catch((e: Error) => {
  console.error(e);
  process.exit(1);
});
