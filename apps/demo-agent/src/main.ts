/**
 * `npm run demo`: finds or starts Errata, then plays scripted agent policies against four MCP servers with the
 * tool calls instrumented by @errata/sdk, and ends with the lines that show Errata's reports.
 */
import { startErrata, type ErrataExportStats } from '@errata/sdk';
import { setTimeout as sleep } from 'node:timers/promises';
import { readDemoConfig, type DemoConfig } from './config/demo-config';
import { DemoError, messageOf } from './demo-error';
import { connectToErrata, type ErrataConnection } from './errata/errata-connection';
import { fetchRetryWaste, type RetryWasteReport } from './errata/errata-http';
import type { ErrataProcess } from './errata/errata-process';
import { allSessions, closeSessions, connectDemoServers, type DemoServers } from './mcp/demo-servers';
import { createWorkspace } from './mcp/demo-workspace';
import type { AgentPolicy, PolicyName } from './policies/agent-policy';
import { contractAwarePolicy } from './policies/contract-aware.policy';
import { naivePolicy } from './policies/naive.policy';
import {
  describeCounts,
  exportLine,
  reportAccessLines,
  reportLines,
  runLine,
  summaryLines,
} from './report/demo-output';
import { PolicyTally, difference } from './report/policy-tally';
import { playEpisode } from './scenarios/episode';

const POLICIES: readonly AgentPolicy[] = [naivePolicy, contractAwarePolicy];
const REPORT_WAIT_MS = 20_000;

const log = (line = ''): void => void process.stdout.write(`${line}\n`);

interface PlayResult {
  readonly tallies: ReadonlyMap<PolicyName, PolicyTally>;
  readonly stats: ErrataExportStats;
  readonly from: string;
}

async function playAll(config: DemoConfig, errata: ErrataConnection): Promise<PlayResult> {
  // Before any MCP client exists; each client is also instrumented explicitly (mcp-session.ts).
  const handle = startErrata({
    endpoint: errata.url,
    apiKey: errata.ingestKey,
    serviceName: 'errata-demo-agent',
  });
  const tallies = new Map(POLICIES.map((policy) => [policy.name, new PolicyTally()]));
  const workspace = await createWorkspace();
  let servers: DemoServers | undefined;
  let from = new Date().toISOString();
  try {
    log('Starting the MCP servers (support-desk, server-everything, server-filesystem, server-memory)…');
    servers = await connectDemoServers(workspace);
    log(`Connected to ${allSessions(servers).length} MCP servers over stdio.`);
    log();
    for (const policy of POLICIES) log(`  ${policy.name.padEnd(15)} ${policy.summary}`);
    from = new Date().toISOString();
    for (let episode = 1; episode <= config.episodes; episode++) {
      log();
      log(`Episode ${episode}/${config.episodes}`);
      for (const policy of POLICIES) {
        const tally = tallies.get(policy.name)!;
        const before = tally.counts();
        const context = { policy, episode, servers, workspace, tally };
        // Every agent run of the first episode is shown; later episodes repeat it, so one line each.
        await playEpisode(context, (run) => {
          if (episode === 1) log(runLine(policy.name, run));
        });
        const played = difference(tally.counts(), before);
        log(
          `  ${policy.name.padEnd(15)} episode: ${describeCounts(played)} — total ${tally.counts().calls} calls`,
        );
      }
    }
  } finally {
    if (servers !== undefined) await closeSessions(allSessions(servers));
    await workspace.remove();
    await handle.shutdown(); // flushes every span still queued
  }
  return { tallies, stats: handle.stats(), from };
}

/** Errata projects what it ingests within a poll interval: wait until the report holds every call of this run. */
async function waitForReport(
  url: string,
  readKey: string,
  from: string,
  calls: number,
): Promise<RetryWasteReport> {
  const deadline = Date.now() + REPORT_WAIT_MS;
  for (;;) {
    const { status, report } = await fetchRetryWaste(url, readKey, { groupBy: 'category', from });
    if (report === null)
      throw new DemoError(`Errata answered ${status} to the retry-waste report (read key wrong?)`);
    if (report.totals.calls >= calls || Date.now() > deadline) return report;
    await sleep(250);
  }
}

async function printErrataReport(errata: ErrataConnection, result: PlayResult, calls: number): Promise<void> {
  if (errata.readKey === null) return;
  const all = await waitForReport(errata.url, errata.readKey, result.from, calls);
  const byPolicy = await Promise.all(
    POLICIES.map(async ({ name }) => {
      const { report } = await fetchRetryWaste(errata.url, errata.readKey!, {
        agent: name,
        from: result.from,
      });
      return [name, report!] as const;
    }),
  );
  log();
  for (const line of reportLines(all, byPolicy)) log(line);
  if (all.totals.calls < calls) {
    log(
      `  (Errata had projected ${all.totals.calls} of ${calls} calls after ${REPORT_WAIT_MS / 1000} s; run the curl lines again)`,
    );
  }
}

function printKeys(errata: ErrataConnection): void {
  if (errata.process === null) return;
  log();
  log('Keys of project "default" in the Errata the demo started:');
  log(`  ingest  ${errata.ingestKey}`);
  log(`  read    ${errata.readKey}`);
  if (errata.generatedKeys) {
    log(
      "  (generated for this run, in the demo's own store; set ERRATA_INGEST_KEY / ERRATA_READ_KEY to choose them)",
    );
  }
}

/** Keeps the Errata the demo started until Ctrl-C (or SIGTERM), or until it exits by itself. */
function serveUntilStopped(server: ErrataProcess): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => void server.stop().then(resolve);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    void server.exited.then(resolve);
  });
}

async function main(): Promise<void> {
  const config = readDemoConfig(process.env);
  const errata = await connectToErrata(config, log);
  try {
    const result = await playAll(config, errata);
    const columns = POLICIES.map(({ name }) => [name, result.tallies.get(name)!.counts()] as const);
    log();
    for (const line of summaryLines(config.episodes, columns)) log(line);
    log(exportLine(result.stats));
    if (result.stats.failed > 0 || result.stats.dropped > 0) {
      throw new DemoError(
        `${result.stats.failed + result.stats.dropped} spans did not reach Errata at ${errata.url}; its reports are incomplete`,
      );
    }
    const calls = columns.reduce((total, [, counts]) => total + counts.calls, 0);
    await printErrataReport(errata, result, calls);
    printKeys(errata);
    log();
    for (const line of reportAccessLines({ url: errata.url, readKey: errata.readKey, from: result.from }))
      log(line);
  } catch (error) {
    await errata.process?.stop();
    throw error;
  }
  if (errata.process === null) return;
  log();
  if (config.keepServer ?? process.stdin.isTTY === true) {
    log(
      `Errata keeps running (pid ${errata.process.pid}) so that the lines above work. Press Ctrl-C to stop it.`,
    );
    await serveUntilStopped(errata.process);
    log('Errata stopped.');
  } else {
    await errata.process.stop();
    log('Stopped the Errata the demo started (DEMO_KEEP_SERVER=1 keeps it running).');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`Demo failed: ${error instanceof DemoError ? error.message : messageOf(error)}\n`);
  if (!(error instanceof DemoError) && error instanceof Error && error.stack)
    process.stderr.write(`${error.stack}\n`);
  process.exitCode = 1;
});
