import { inject } from 'vitest';
import { copyPgliteTemplate } from './pglite-template';

/**
 * Makes `dataDir` (an ERRATA_DATA_DIR, or the demo's DEMO_DATA_DIR) hold a new embedded store as PGlite's initdb
 * leaves it, unmigrated: a copy of the run's template (pglite-template.ts), not seconds of initdb of its own.
 */
export function seedEmbeddedStore(dataDir: string): Promise<void> {
  return copyPgliteTemplate(inject('pgliteTemplate'), dataDir);
}
