/**
 * The platform under test, in its own process (so the synthetic callers and vendor doubles in the runner do not
 * share its event loop): api + realtime + cpu roles on a throwaway database cloned from the migrated template.
 * Prints one JSON line `{url, apiKey, agentId}` on stdout once ready; stops on SIGTERM.
 */
import setup from '../../test/global-setup.ts';
import { startTestPlatform } from '../../test/helpers/platform.ts';

await setup();
const p = await startTestPlatform({ roles: ['api', 'realtime', 'cpu'], env: { DATABASE_POOL_MAX: '10' } });
const dev = await p.developer('scale');
const res = await p.request('/v1/agents', {
  method: 'POST',
  key: dev.apiKey,
  json: {
    name: 'Benchmark agent',
    systemPrompt: 'You answer the phone for a dental practice.',
    firstMessage: 'Hello, thanks for calling. How can I help?',
    llmModel: 'gpt-4o-mini',
  },
});
if (res.status !== 201) {
  console.error('agent create failed', res.status, await res.text());
  process.exit(1);
}
const agent = (await res.json()) as { id: string };
console.log(JSON.stringify({ url: p.url, apiKey: dev.apiKey, agentId: agent.id }));

const stop = () => void p.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
