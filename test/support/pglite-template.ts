import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { until } from './until';

/**
 * A new embedded store as PGlite's initdb leaves it, made once per run (in `root`, a directory of the run) by the
 * first test that needs one. PGlite runs initdb in WebAssembly, some 8 s of CPU for every new store; a copy takes a
 * fraction of a second. Errata finds the copy unmigrated, so it migrates it, makes project `default` and prints its
 * keys as on any first start: only PGlite's initdb is shared.
 */
const TEMPLATE = 'pgdata';
/** Created by the test that makes the template: the others wait for it. */
const CLAIM = 'claimed';
/** Written instead of the template when initdb failed: its output, for the tests that wait for the template. */
const FAILED = 'failed';

/** In a process of its own: initdb would block the test's event loop for seconds. */
const INITDB = `
const { PGlite } = require('@electric-sql/pglite');
const pglite = new PGlite(process.env.PGLITE_TEMPLATE_DIR);
pglite.waitReady.then(() => pglite.close()).catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

const run = promisify(execFile);

/** Under its final name only once complete: no test copies half of it. */
async function makeTemplate(root: string): Promise<void> {
  const building = join(root, 'building');
  try {
    await run(process.execPath, ['-e', INITDB], {
      cwd: join(__dirname, '../..'),
      env: { ...process.env, PGLITE_TEMPLATE_DIR: building },
    });
    await rename(building, join(root, TEMPLATE));
  } catch (error) {
    await writeFile(join(root, FAILED), `PGlite's initdb for the template store failed: ${String(error)}`);
  }
}

/** True for the one caller that creates `path`. */
async function claim(path: string): Promise<boolean> {
  try {
    await (await open(path, 'wx')).close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Makes `dataDir` (an ERRATA_DATA_DIR, or the demo's DEMO_DATA_DIR) hold a new embedded store, as a first start
 * would leave it once PGlite's initdb is done: a copy of the template in `root`, made first if no test has yet.
 */
export async function copyPgliteTemplate(root: string, dataDir: string): Promise<void> {
  const template = join(root, TEMPLATE);
  const failed = join(root, FAILED);
  if (await claim(join(root, CLAIM))) await makeTemplate(root);
  // Another test makes it: no longer than this one's own initdb would take (up to a minute on a busy machine).
  else await until('the template embedded store', () => existsSync(template) || existsSync(failed), 120_000);
  if (!existsSync(template)) throw new Error(await readFile(failed, 'utf8'));
  await mkdir(dataDir, { recursive: true });
  // cp(1), not fs.cp, which copies its thousand files a few times slower.
  await run('cp', ['-R', template, join(dataDir, 'pgdata')]);
}
