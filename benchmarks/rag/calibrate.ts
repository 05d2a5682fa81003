/**
 * Prints the two search signals (cosine, lexeme coverage) of every candidate for the committed retrieval set,
 * the recall@k of the current score, and a logistic fit of the score's weights. How score.ts was calibrated:
 * `npx tsx benchmarks/rag/calibrate.ts`.
 */
import { buildEngines } from '../../shared/engines/engines.ts';
import { loadConfig } from '../../shared/kernel/config/index.ts';
import { queryCandidates, termWeights } from '../../shared/domains/rag/search.ts';
import { LOCAL_WEIGHTS, relevanceScore, type ScoreWeights } from '../../shared/domains/rag/score.ts';
import { addDocument, loadRetrievalSet, localEngine, newCollection, scratchDatabase } from './corpus.ts';

interface Sample {
  q: number;
  cos: number;
  cov: number;
  relevant: boolean;
  unrelated: boolean;
}

async function main() {
  const set = loadRetrievalSet();
  const { db, close } = await scratchDatabase('vap_rag_calibrate');
  try {
    const engine = localEngine();
    const weigh = termWeights({ engines: buildEngines(loadConfig()) });
    const { developerId, collection } = await newCollection(db);
    const docIds = new Map<string, string>();
    for (const d of set.documents) {
      docIds.set(
        await addDocument(db, engine, collection, developerId, `${d.title}\n\n${d.text}`, { key: d.id }),
        d.id,
      );
    }
    const samples: Sample[] = [];
    const queries = [
      ...set.questions.map((q) => ({ text: q.question, gold: q.documentId })),
      ...set.unrelated.map((text) => ({ text, gold: null as string | null })),
    ];
    for (const [qi, q] of queries.entries()) {
      const [v] = await engine.embed([q.text], { inputType: 'query' });
      const rows = await queryCandidates(db, 100, undefined, {
        collectionId: collection.id,
        dimension: collection.embedding_dimension,
        vector: v!,
        query: q.text,
        limit: 10,
        filter: null,
        vectorCandidates: 40,
        termWeight: weigh,
      });
      for (const r of rows) {
        samples.push({
          q: qi,
          cos: r.cos ?? 0,
          cov: r.lexemes ? r.matched / r.lexemes : 0,
          relevant: q.gold !== null && docIds.get(r.document_id) === q.gold,
          unrelated: q.gold === null,
        });
      }
    }
    if (process.env.DEBUG) {
      for (const [qi, q] of queries.entries()) {
        const top = samples
          .filter((x) => x.q === qi)
          .sort((a, b) => relevanceScore(b.cos, b.cov, LOCAL_WEIGHTS) - relevanceScore(a.cos, a.cov, LOCAL_WEIGHTS))[0];
        if (top)
          console.log(
            `${q.gold ?? 'UNRELATED'}\t${top.relevant}\tcos ${top.cos.toFixed(3)} cov ${top.cov.toFixed(2)}\t${q.text}`,
          );
      }
    }
    const nq = set.questions.length;
    report('current', samples, nq, LOCAL_WEIGHTS);
    const fitted = fit(samples);
    report('fitted', samples, nq, fitted);
    // Two-fold cross-validation (queries split by parity): how the fit does on queries it did not see.
    for (const fold of [0, 1]) {
      const w = fit(samples.filter((x) => x.q % 2 !== fold));
      const held = samples.filter((x) => x.q % 2 === fold);
      const nHeld = set.questions.filter((_, i) => i % 2 === fold).length;
      report(`held-out fold ${fold} (fitted on the other half)`, held, nHeld, w);
    }
  } finally {
    await close();
  }
}

function report(name: string, samples: Sample[], nq: number, w: ScoreWeights) {
  const byQ = new Map<number, { s: number; relevant: boolean; unrelated: boolean }[]>();
  for (const x of samples) {
    const list = byQ.get(x.q) ?? [];
    list.push({ s: relevanceScore(x.cos, x.cov, w), relevant: x.relevant, unrelated: x.unrelated });
    byQ.set(x.q, list);
  }
  let r1 = 0;
  let r5 = 0;
  let r5at = 0;
  let unrelatedAbove = 0;
  let unrelatedTotal = 0;
  const bestGold: number[] = [];
  const topUnrelated: number[] = [];
  for (const [, list] of byQ) {
    list.sort((a, b) => b.s - a.s);
    if (list[0]?.unrelated) {
      unrelatedTotal++;
      topUnrelated.push(list[0].s);
      if (list[0].s >= 0.7) unrelatedAbove++;
      continue;
    }
    const top5 = list.slice(0, 5);
    if (list[0]?.relevant) r1++;
    if (top5.some((x) => x.relevant)) r5++;
    if (top5.some((x) => x.relevant && x.s >= 0.7)) r5at++;
    bestGold.push(Math.max(0, ...list.filter((x) => x.relevant).map((x) => x.s)));
  }
  const pct = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) * p)]!.toFixed(3);
  console.log(
    `${name} ${JSON.stringify(w)}\n  recall@1 ${(r1 / nq).toFixed(3)}  recall@5 ${(r5 / nq).toFixed(3)}  ` +
      `recall@5 at threshold 0.7 ${(r5at / nq).toFixed(3)}  unrelated queries with a result ≥ 0.7: ${unrelatedAbove}/${unrelatedTotal}\n` +
      `  best relevant score p10/p50/p90 ${pct(bestGold, 0.1)}/${pct(bestGold, 0.5)}/${pct(bestGold, 0.9)}  ` +
      `top unrelated score p50/p90/max ${pct(topUnrelated, 0.5)}/${pct(topUnrelated, 0.9)}/${pct(topUnrelated, 1)}`,
  );
}

/** Logistic regression on (cos, cov) by gradient descent; relevant = chunk of the gold document. */
function fit(samples: Sample[]): ScoreWeights {
  let a = 0;
  let b = 0;
  let c = 0;
  const pos = samples.filter((s) => s.relevant).length;
  const neg = samples.length - pos;
  for (let it = 0; it < 20000; it++) {
    let ga = 0;
    let gb = 0;
    let gc = 0;
    for (const s of samples) {
      const p = 1 / (1 + Math.exp(-(a * s.cos + b * s.cov + c)));
      const y = s.relevant ? 1 : 0;
      const wgt = s.relevant ? 0.5 / pos : 0.5 / neg; // balanced classes
      ga += wgt * (p - y) * s.cos;
      gb += wgt * (p - y) * s.cov;
      gc += wgt * (p - y);
    }
    a -= 5 * ga;
    b -= 5 * gb;
    c -= 5 * gc;
  }
  return { cos: +a.toFixed(2), cov: +b.toFixed(2), bias: +c.toFixed(2) };
}

await main();
