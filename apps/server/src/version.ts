import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The server package's version: `apps/server/package.json`, one level above both `src/` and `dist/`. */
export const SERVER_VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;
