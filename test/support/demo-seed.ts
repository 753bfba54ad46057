import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { AgentTrace } from './agent-spans';
import { sendSpans, type TestServer } from './server';

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

/** Adds `count` servers with one call each (`srv-<j>`, tool `ping-<j>`) from `t0`: enough to page the scorecard. */
export async function seedOneCallServers(server: TestServer, count: number, t0: number): Promise<void> {
  const pings = Array.from({ length: count }, (_, j) => ({
    tool: `ping-${j}`,
    server: `srv-${j}`,
    startMs: t0 + j * 10,
    durationMs: 1,
  }));
  expect(await sendSpans(server.url, server.ingestKey, new AgentTrace().run('pinger', t0, pings))).toBe(200);
}
