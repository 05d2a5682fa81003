import { loadConfig } from '../shared/kernel/config/index.ts';
import { migrate } from '../shared/kernel/db/migrate.ts';
import { createDb } from '../shared/kernel/db/pool.ts';

const config = loadConfig();
const db = createDb(config.DATABASE_URL, 1);
const applied = await migrate(db);
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
await db.end();
