import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Language models the tests share on a machine (one folder per content hash, and the pruned general model every
 * build starts from): runs of a test, and tests building the same text, build it once.
 */
export const SHARED_LM_DIR = join(tmpdir(), 'vap-test-language-models');
