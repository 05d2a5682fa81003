/**
 * The developer portal's two budgets (issue #13): its JavaScript + CSS over the wire (the gzip siblings the build
 * writes, which the api role serves), and time from navigation to a rendered calls page in headless Chromium,
 * signed in, with 50 calls in the list. Targets: ≤ 150 KB gzip, ≤ 1 s.
 *
 * Runs the real platform in this process (the browser is its own process), on a database cloned from the
 * migrated template. BENCH_NAVIGATIONS (default 30) sets N; the first navigation (cold cache) is reported apart.
 */
import { randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import setup from '../../support/global-setup.ts';
import { PortalBrowser } from '../../support/helpers/portal.ts';
import { startTestPlatform } from '../../support/helpers/platform.ts';
import { checkPrerequisites, launchChromium } from '../../support/portal/browser.ts';

const N = Number(process.env.BENCH_NAVIGATIONS ?? 30);
const DIST = join(process.cwd(), 'portal', 'dist', 'assets');
const TARGET_KB = 150;
const TARGET_MS = 1000;

async function wireBytes(): Promise<{ gzip: number; brotli: number; raw: number; files: number }> {
  const out = { gzip: 0, brotli: 0, raw: 0, files: 0 };
  for (const f of await readdir(DIST)) {
    if (!/\.(js|css)$/.test(f)) continue;
    out.files++;
    out.raw += (await stat(join(DIST, f))).size;
    out.gzip += (await stat(join(DIST, `${f}.gz`))).size;
    out.brotli += (await stat(join(DIST, `${f}.br`))).size;
  }
  return out;
}

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

checkPrerequisites();
const size = await wireBytes();
await setup();
const p = await startTestPlatform({ roles: ['api'] });
const browser = await launchChromium();
try {
  const portal = new PortalBrowser(p);
  const developerId = await portal.signIn(`+14155550${100 + Math.floor(Math.random() * 100)}`, 'Bench');
  // 50 finished calls with four turns each, so the page renders a full list.
  for (let i = 0; i < 50; i++) {
    const id = `ses_bench_${randomBytes(6).toString('hex')}`;
    await p.infra.db.query(
      `insert into rt_sessions (id, developer_id, agent_id, channel, status, started_at, ended_at)
       values ($1, $2, 'agt_bench', 'direct', 'completed', now() - interval '5 minutes', now() - interval '4 minutes')`,
      [id, developerId],
    );
  }
  const page = await browser.newPage();
  await page.setCookie({ name: 'vap_portal', value: portal.cookie!, url: p.url, httpOnly: true, sameSite: 'Lax' });
  const url = `${p.url}/portal/calls`;
  const times: number[] = [];
  for (let i = 0; i <= N; i++) {
    const t0 = performance.now();
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(`document.querySelectorAll('table.calls tbody tr').length === 50`, {
      polling: 'mutation',
    });
    times.push(performance.now() - t0);
  }
  const [cold, ...warm] = times;
  // The machine's load is printed with the figures: on a shared 2-core box it moves the timings more than the code.
  console.log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')}`,
  );
  const kb = size.gzip / 1024;
  const med = pct(warm, 0.5);
  const p95 = pct(warm, 0.95);
  console.log(
    `portal JS+CSS over the wire: ${kb.toFixed(1)} KB gzip (${(size.brotli / 1024).toFixed(1)} KB brotli, ` +
      `${(size.raw / 1024).toFixed(1)} KB raw, ${size.files} files)   target ≤ ${TARGET_KB} KB  ${kb <= TARGET_KB ? 'OK' : 'OVER'}`,
  );
  console.log(
    `navigation → rendered calls page (50 rows), N=${warm.length}: median ${med.toFixed(0)} ms, ` +
      `p95 ${p95.toFixed(0)} ms (cold first load ${cold!.toFixed(0)} ms)   target ≤ ${TARGET_MS} ms  ${p95 <= TARGET_MS ? 'OK' : 'OVER'}`,
  );
  console.log(
    JSON.stringify({
      gzipBytes: size.gzip,
      brotliBytes: size.brotli,
      rawBytes: size.raw,
      medianMs: Math.round(med),
      p95Ms: Math.round(p95),
      coldMs: Math.round(cold!),
    }),
  );
} finally {
  await browser.close();
  await p.close();
}
