import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { TestServer } from './server';

const DEMO = join(__dirname, '../../apps/demo-agent/dist/main.js');

/** Fills `server` with the demo agent's episode (`npm run demo`: real MCP servers, @errata/sdk, OTLP ingest). */
export function seedWithDemo(server: TestServer): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [DEMO],
      {
        env: {
          ...process.env,
          ERRATA_URL: server.url,
          ERRATA_INGEST_KEY: server.ingestKey,
          ERRATA_READ_KEY: server.readKey,
          DEMO_EPISODES: '1',
        },
        timeout: 60_000,
      },
      (error, _stdout, stderr) => (error ? reject(new Error(`demo failed: ${stderr}`)) : resolve()),
    );
  });
}
