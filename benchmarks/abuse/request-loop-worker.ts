/**
 * The victim's request loop (victim.ts: requestLoop) on a thread of its own, so that what the runner does beside it
 * (the abuser's clients reading megabytes of audio, the Twilio doubles' calls) does not delay its timings: a real
 * victim's client is not in the attacker's process. Stops at the first message; posts its figures back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Tenant } from '../../support/abuse/hostile-tenant.ts';
import { requestLoop } from './victim.ts';

const { tenant, clip } = workerData as { tenant: Tenant; clip: Uint8Array };
let over = false;
parentPort!.once('message', () => (over = true));
parentPort!.postMessage(await requestLoop(tenant, Buffer.from(clip), () => over));
