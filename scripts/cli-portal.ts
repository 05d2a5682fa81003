import type { Config } from '../shared/kernel/config/index.ts';
import { attachPhone } from '../shared/kernel/db/developers.ts';
import type { Db } from '../shared/kernel/db/pool.ts';
import { isApiError } from '../shared/kernel/errors/api-error.ts';
import { readDevOtp } from '../shared/domains/portal/otp-sender.ts';
import { normalisePhone } from '../shared/domains/portal/phone.ts';
import { createRedis } from '../shared/kernel/redis.ts';

/** `portal attach-phone` and `portal code` of the operator CLI (scripts/cli.ts). */
export async function portalCommand(
  action: 'attach-phone' | 'code',
  values: { developer?: string; phone?: string },
  config: Config,
  db: Db,
  fail: (message: string) => never,
): Promise<void> {
  if (!values.phone) fail('--phone is required');
  let phone: string;
  try {
    phone = normalisePhone(values.phone);
  } catch (e) {
    if (isApiError(e)) fail(`--phone: ${e.message}`);
    throw e;
  }
  if (action === 'attach-phone') {
    if (!values.developer) fail('--developer is required');
    const r = await attachPhone(db, values.developer, phone);
    if (r === 'missing') fail(`no developer ${values.developer}`);
    if (r === 'taken') fail(`${phone} already belongs to another developer`);
    console.log(JSON.stringify({ developerId: r.id, phone: r.phone }));
    return;
  }
  const redis = createRedis(config.REDIS_URL, 'cli');
  try {
    const code = await readDevOtp(redis, config.REDIS_PREFIX, phone);
    if (!code) {
      console.error(
        `no code for ${phone}: none was requested in the last ${config.PORTAL_OTP_TTL_SECONDS}s, ` +
          'or the server does not use the development sink (PORTAL_OTP_SENDER=dev-log)',
      );
      process.exitCode = 1;
      return;
    }
    console.log(JSON.stringify({ phone, code }));
  } finally {
    redis.disconnect();
  }
}
