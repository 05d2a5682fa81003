import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { PageQuery, pageSchema } from '../../shared/kernel/pagination.ts';
import {
  Collection,
  CollectionParams,
  CreateCollectionBody,
  DocumentParams,
  IngestBody,
  IngestResult,
  SearchBody,
  SearchResponse,
} from '../../shared/contracts/rag.ts';
import {
  createForRequest,
  deleteCollection,
  deleteDocument,
  getCollection,
  ingestForRequest,
  listCollections,
  searchForRequest,
} from '../services/collections.ts';

/** Routes of the collections area, registered at the root with their full /v1/... paths. */
export const collectionsRoutes: FastifyPluginAsyncZod = async (app) => {
  const { db } = app.infra;
  const tags = ['Collections'];

  app.post(
    '/v1/collections',
    {
      schema: { tags, summary: 'Create a collection', body: CreateCollectionBody, response: { 201: Collection } },
      config: { idempotent: true },
    },
    async (req, reply) => reply.code(201).send(await createForRequest(req, req.body)),
  );

  app.get(
    '/v1/collections',
    {
      schema: { tags, summary: 'List collections', querystring: PageQuery, response: { 200: pageSchema(Collection) } },
    },
    async (req) => listCollections(db, req.auth.developerId, req.query.limit, req.query.cursor),
  );

  app.get(
    '/v1/collections/:id',
    { schema: { tags, summary: 'Get a collection', params: CollectionParams, response: { 200: Collection } } },
    async (req) => getCollection(db, req.auth.developerId, req.params.id),
  );

  app.delete(
    '/v1/collections/:id',
    { schema: { tags, summary: 'Delete a collection with its documents and chunks', params: CollectionParams } },
    async (req, reply) => {
      await deleteCollection(db, req.auth.developerId, req.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/collections/:id/ingest',
    {
      schema: {
        tags,
        summary: 'Ingest a document (text, transcript, audio URL or web page)',
        params: CollectionParams,
        body: IngestBody,
        response: { 201: IngestResult },
      },
      config: { idempotent: true },
    },
    async (req, reply) => reply.code(201).send(await ingestForRequest(req, reply, req.params.id, req.body)),
  );

  app.post(
    '/v1/collections/:id/search',
    {
      schema: {
        tags,
        summary: 'Hybrid (vector + full-text) search of a collection',
        params: CollectionParams,
        body: SearchBody,
        response: { 200: SearchResponse },
      },
    },
    async (req, reply) => searchForRequest(req, reply, req.params.id, req.body),
  );

  app.delete(
    '/v1/collections/:collectionId/documents/:documentId',
    { schema: { tags, summary: 'Delete a document and its chunks', params: DocumentParams } },
    async (req, reply) => {
      await deleteDocument(db, req.auth.developerId, req.params.collectionId, req.params.documentId);
      return reply.code(204).send();
    },
  );
};
