import Fastify from 'fastify';

// The baseline: a bare Fastify hello-world, same framework version, no plugins, no logging.
const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
await app.listen({ host: '127.0.0.1', port: 0 });
const addr = app.server.address();
process.stdout.write(`PORT=${typeof addr === 'object' && addr ? addr.port : 0}\n`);
