/** A temporary directory for the filesystem server (its only allowed directory) and the memory server's file. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface DemoWorkspace {
  readonly root: string;
  /** The filesystem server's allowed directory. */
  readonly files: string;
  /** A file that exists next to the allowed directory, but outside it. */
  readonly outsideFile: string;
  readonly memoryFile: string;
  remove(): Promise<void>;
}

export async function createWorkspace(): Promise<DemoWorkspace> {
  const root = await mkdtemp(join(tmpdir(), 'errata-demo-'));
  const files = join(root, 'files');
  await mkdir(join(files, 'notes'), { recursive: true });
  await writeFile(
    join(files, 'notes', 'welcome.md'),
    '# Support desk notes\n\nRefunds within 30 days of delivery.\n',
  );
  await writeFile(join(files, 'notes', 'todo.md'), '- call back CUS-2210 about the desk lamp\n');
  const outsideFile = join(root, 'credentials.txt');
  await writeFile(outsideFile, 'not for the agent\n');
  return {
    root,
    files,
    outsideFile,
    memoryFile: join(root, 'memory.jsonl'),
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
