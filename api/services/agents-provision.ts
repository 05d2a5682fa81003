import type { FastifyRequest } from 'fastify';
import type { ProvisionBody, ProvisionResponse } from '../../shared/contracts/agents.ts';
import type { Reservation } from '../../shared/platform/metering/types.ts';
import { withTransaction } from '../../shared/kernel/db/pool.ts';
import { createCollection } from '../../shared/domains/rag/collections.ts';
import { ingestDocument } from '../../shared/domains/rag/ingest.ts';
import type { Infra } from '../../shared/platform/infra.ts';
import { requireCoverableCallDuration } from '../../shared/domains/billing/session-hold.ts';
import { checkAnalysis, checkTools, createAgent } from './agents.ts';
import { defaultLlmProvider } from '../../shared/domains/agents/llm-providers.ts';

/**
 * Agent + collection + initial content, all or nothing: one transaction holds the collection insert, the agent
 * insert (so a duplicate agent id fails before any embedding work) and every document's chunks. Any failure —
 * a 409 id, an ingest that cannot be embedded or has no text — rolls everything back.
 */
export async function provisionAgent(
  infra: Infra,
  req: FastifyRequest,
  body: ProvisionBody,
): Promise<ProvisionResponse> {
  const developerId = req.auth.developerId;
  const { collection: collectionBody, initialContent, collectionId: _ignored, ...agentBody } = body;
  checkTools(agentBody.tools, infra.addressPolicy);
  checkAnalysis(agentBody.analysis);
  requireCoverableCallDuration(infra.config, agentBody.maxDurationSeconds, 'maxDurationSeconds');
  const llmProvider = agentBody.llmProvider ?? (await defaultLlmProvider(infra, developerId));
  // Ingest credit holds are settled only once the transaction has committed: a rolled-back provisioning
  // charges nothing.
  const holds: Reservation[] = [];
  try {
    const result = await withTransaction(infra.db, async (tx) => {
      const collection = await createCollection(tx, infra.engines.embeddings, developerId, collectionBody);
      const agent = await createAgent(tx, infra.addressPolicy, developerId, {
        ...agentBody,
        llmProvider,
        collectionId: collection.id,
      });
      const ingestResults: ProvisionResponse['ingestResults'] = [];
      for (const item of initialContent) {
        const out = await ingestDocument(
          infra,
          collection.id,
          { content: item.content, contentType: item.contentType, metadata: item.metadata },
          { developerId, requestId: req.id, headers: req.headers, db: tx, settleLater: holds },
        );
        req.providerUsed = out.providerUsed;
        if (!out.billable) req.usageBypassed = true;
        ingestResults.push({
          documentId: out.documentId,
          chunksCreated: out.chunksCreated,
          tokensUsed: out.tokensUsed,
        });
      }
      return { agent, collection, ingestResults };
    });
    for (const h of holds) await h.commit();
    return result;
  } catch (e) {
    for (const h of holds) await h.refund();
    throw e;
  }
}
