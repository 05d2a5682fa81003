/**
 * One "role" of the shared-S3 test: starts the embedded S3 the way a role's boot does (createInfra →
 * startEmbeddedS3) with the folder and port it is given, prints whether it owns the server, prints again when it
 * takes the port over, and runs until killed.
 */
import { startEmbeddedS3 } from '../../shared/kernel/storage/embedded-s3.ts';

const [dir, port] = process.argv.slice(2) as [string, string];
const s3 = await startEmbeddedS3(dir, Number(port));
process.stdout.write(JSON.stringify({ ready: true, owned: s3.owned }) + '\n');
if (!s3.owned) {
  const watch = setInterval(() => {
    if (!s3.owned) return;
    process.stdout.write(JSON.stringify({ tookOver: true }) + '\n');
    clearInterval(watch);
  }, 50);
}
process.on('SIGTERM', () => void s3.close().then(() => process.exit(0)));
setInterval(() => {}, 60_000);
