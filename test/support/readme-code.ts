/** The README's code blocks, run as they are written: a recipe that drifts from the code fails a test. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const README = join(__dirname, '..', '..', 'README.md');

/** The one ```js block of the README that contains `marker`, verbatim. */
export function readmeJsBlock(marker: string): string {
  const blocks = [...readFileSync(README, 'utf8').matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  const found = blocks.filter((block) => block.includes(marker));
  if (found.length !== 1) throw new Error(`${found.length} README js blocks contain ${marker}`);
  return found[0]!;
}

/**
 * The module a README block is, imported from a file of its own next to the repository's node_modules (its
 * imports resolve as a reader's would: `standardwebhooks` is a dependency here).
 */
export async function importReadmeBlock<T>(marker: string): Promise<T> {
  const block = readmeJsBlock(marker);
  const dir = mkdtempSync(join(__dirname, '..', '..', 'node_modules', '.readme-'));
  const file = join(dir, 'block.mjs');
  try {
    writeFileSync(file, block);
    return (await import(pathToFileURL(file).href)) as T;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
