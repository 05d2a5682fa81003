import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CreateKeyBody, CreatedKey, IdParams, KeyListItem, RotatedKey } from '../../shared/contracts/keys.ts';
import { PageQuery, pageSchema } from '../../shared/kernel/pagination.ts';
import { mintKey } from '../../shared/platform/auth/mint-key.ts';
import { deleteKey, listKeys, rotateKey } from '../services/keys.ts';

export const keysRoutes: FastifyPluginAsyncZod = async (app) => {
  const { db, authenticator } = app.infra;
  const tags = ['Keys'];

  app.post(
    '',
    {
      schema: {
        tags,
        summary: 'Create an API key',
        description: 'Both fields are optional, and so is the body: without one the key is named "Default".',
        body: CreateKeyBody,
        response: { 201: CreatedKey },
      },
      // No body (or an empty one, see input-guard.ts) is the empty object, so that the field defaults apply; a
      // JSON `null` is still a 400.
      preValidation: (req, _reply, done) => {
        if (req.body == null && req.headers['content-type'] === undefined) (req as { body: unknown }).body = {};
        done();
      },
      config: {
        idempotent: true,
        idempotentSecrets: { fields: ['key'], replay: 'conflict', resource: 'API key' },
      },
    },
    async (req, reply) => {
      const created = await mintKey(db, req.auth.developerId, req.body.name, req.body.expiresInDays);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '',
    {
      schema: {
        tags,
        summary: 'List active API keys',
        querystring: PageQuery,
        response: { 200: pageSchema(KeyListItem) },
      },
    },
    async (req) => listKeys(db, req.auth.developerId, req.query.limit, req.query.cursor),
  );

  app.delete('/:id', { schema: { tags, summary: 'Revoke an API key', params: IdParams } }, async (req, reply) => {
    await deleteKey(db, authenticator, req.auth.developerId, req.params.id);
    return reply.code(204).send();
  });

  app.post(
    '/:id/rotate',
    { schema: { tags, summary: 'Rotate an API key', params: IdParams, response: { 200: RotatedKey } } },
    async (req) => rotateKey(db, authenticator, req.auth.developerId, req.params.id),
  );
};
