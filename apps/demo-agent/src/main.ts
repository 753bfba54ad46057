/**
 * `npm run demo`: finds or starts Errata, then plays scripted agent policies against four MCP servers with the
 * tool calls instrumented by @errata/sdk, and ends with the lines that show Errata's reports.
 */
import { startErrata, type ErrataExportStats } from '@errata/sdk';
import { DEMO_USAGE, readDemoConfig, wantsHelp, type DemoConfig } from './config/demo-config';
import { DemoError, messageOf } from './demo-error';
import { DemoInterrupted, listenForInterrupt, type Interruption } from './demo-interrupt';
import { connectToErrata, type ErrataConnection } from './errata/errata-connection';
import { waitForRunReports } from './errata/errata-reports';
import type { ErrataProcess } from './errata/errata-process';
import { allSessions, closeSessions, connectDemoServers, type DemoServers } from './mcp/demo-servers';
import { createWorkspace } from './mcp/demo-workspace';
import type { AgentPolicy, PolicyName } from './policies/agent-policy';
import { contractAwarePolicy } from './policies/contract-aware.policy';
import { naivePolicy } from './policies/naive.policy';
import { describeCounts, exportLine, reportAccessLines, runLine, summaryLines } from './report/demo-output';
import { errataReportLines } from './report/errata-report-lines';
import {
  PolicyTally,
  difference,
  escalationCount,
  subagentReportCount,
  type TallyCounts,
} from './report/policy-tally';
import { playEpisode } from './scenarios/episode';

const POLICIES: readonly AgentPolicy[] = [naivePolicy, contractAwarePolicy];
const REPORT_WAIT_MS = 20_000;

const log = (line = ''): void => void process.stdout.write(`${line}\n`);

/** Set when the demo stopped waiting for its spans' flush: the exporter's retries would keep it alive ~10 s. */
let abandonedExport = false;

interface PlayResult {
  readonly tallies: ReadonlyMap<PolicyName, PolicyTally>;
  readonly stats: ErrataExportStats;
  readonly from: string;
  /** The first research run's trace. */
  readonly researchTraceId: string | null;
}

async function playAll(
  config: DemoConfig,
  errata: ErrataConnection,
  interruption: Interruption,
): Promise<PlayResult> {
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
  let researchTraceId: string | null = null;
  try {
    log('Starting the MCP servers (support-desk, server-everything, server-filesystem, server-memory)…');
    servers = await connectDemoServers(workspace);
    interruption.check();
    log(`Connected to ${allSessions(servers).length} MCP servers over stdio.`);
    log();
    for (const policy of POLICIES) log(`  ${policy.name.padEnd(15)} ${policy.summary}`);
    from = new Date().toISOString();
    for (let episode = 1; episode <= config.episodes; episode++) {
      interruption.check();
      log();
      log(`Episode ${episode}/${config.episodes}`);
      for (const policy of POLICIES) {
        interruption.check();
        const tally = tallies.get(policy.name)!;
        const before = tally.counts();
        const context = { policy, episode, servers, workspace, tally, interruption };
        // Every agent run of the first episode is shown; later episodes repeat it, so one line each.
        await playEpisode(context, (run) => {
          if (episode === 1) log(runLine(policy.name, run));
          researchTraceId ??= run.traceId;
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
    // Flushes every span still queued. An Errata the demo started that has exited (a terminal's Ctrl-C reaches it
    // too) takes none: the flush would only wait out the export timeout.
    const flushed = handle.shutdown().then(() => true);
    const gone = errata.process?.exited.then(() => false);
    if (!(await (gone === undefined ? flushed : Promise.race([flushed, gone])))) abandonedExport = true;
  }
  return { tallies, stats: handle.stats(), from, researchTraceId };
}

/** Errata's reports on this run, once they hold every call, hand-off and subagent report the runtime counted. */
async function printErrataReports(
  errata: ErrataConnection,
  from: string,
  columns: readonly (readonly [PolicyName, TallyCounts])[],
): Promise<void> {
  if (errata.readKey === null) return;
  const sum = (value: (counts: TallyCounts) => number) =>
    columns.reduce((total, [, counts]) => total + value(counts), 0);
  const reports = await waitForRunReports({
    url: errata.url,
    readKey: errata.readKey,
    from,
    agents: columns.map(([name]) => name),
    expected: {
      calls: sum((counts) => counts.calls),
      escalations: sum(escalationCount),
      subagentReports: sum(subagentReportCount),
    },
    waitMs: REPORT_WAIT_MS,
  });
  log();
  for (const line of errataReportLines(reports)) log(line);
}

function printKeys(errata: ErrataConnection): void {
  if (errata.process === null) return;
  log();
  log('Keys of project "default" in the Errata the demo started:');
  log(`  ingest  ${errata.ingestKey}`);
  log(`  read    ${errata.readKey}`);
  // A first run's store is new: there are no earlier keys to replace, and no earlier events.
  const earlier = !errata.process.newStore;
  if (errata.generatedKeys) {
    log(
      `  (generated for this run, in the demo's own store${earlier ? ", replacing an earlier run's" : ''}; set ERRATA_INGEST_KEY / ERRATA_READ_KEY to choose them)`,
    );
  }
  if (earlier) log(`  Earlier runs' events stay in its store too: ${errata.store}.`);
  else log(`  Its store keeps this run's events for later runs: ${errata.store}.`);
}

/**
 * Keeps the Errata the demo started until Ctrl-C (or SIGTERM, SIGHUP), or until it exits by itself. The demo's own
 * listeners stay on: under npm a Ctrl-C comes twice, and the second, left to Node's default, ended the demo before
 * it had stopped its Errata.
 */
async function serveUntilStopped(server: ErrataProcess, interruption: Interruption): Promise<void> {
  const asked = await Promise.race([
    interruption.interrupted.then(() => true),
    server.exited.then(() => false),
  ]);
  if (asked) await server.stop();
}

async function main(): Promise<void> {
  if (wantsHelp(process.argv.slice(2))) {
    log(DEMO_USAGE);
    return;
  }
  const config = readDemoConfig(process.env);
  const interruption = listenForInterrupt(log);
  try {
    await run(config, interruption);
  } finally {
    interruption.release();
  }
}

async function run(config: DemoConfig, interruption: Interruption): Promise<void> {
  let errata: ErrataConnection | undefined;
  try {
    // Inside the try: a Ctrl-C while Errata starts stops it too, which is an interruption, not a failure.
    errata = await connectToErrata(config, log);
    interruption.check();
    const result = await playAll(config, errata, interruption);
    const columns = POLICIES.map(({ name }) => [name, result.tallies.get(name)!.counts()] as const);
    log();
    for (const line of summaryLines(config.episodes, columns)) log(line);
    log(exportLine(result.stats));
    if (result.stats.failed > 0 || result.stats.dropped > 0) {
      throw new DemoError(
        `${result.stats.failed + result.stats.dropped} spans did not reach Errata at ${errata.url}; its reports are incomplete`,
      );
    }
    await printErrataReports(errata, result.from, columns);
    interruption.check();
    printKeys(errata);
    log();
    const access = { url: errata.url, readKey: errata.readKey, from: result.from };
    for (const line of reportAccessLines({ ...access, traceId: result.researchTraceId })) log(line);
  } catch (error) {
    await errata?.process?.stop();
    // A Ctrl-C in a terminal also stops the MCP servers, so the step under way fails: it was the interruption.
    interruption.check();
    throw error;
  }
  if (errata.process === null) return;
  log();
  if (config.keepServer ?? process.stdin.isTTY === true) {
    log(
      `Errata keeps running (pid ${errata.process.pid}) so that the lines above work. Press Ctrl-C to stop it.`,
    );
    await serveUntilStopped(errata.process, interruption);
    log('Errata stopped.');
  } else {
    await errata.process.stop();
    log('Stopped the Errata the demo started (DEMO_KEEP_SERVER=1 keeps it running).');
  }
}

main().catch((error: unknown) => {
  if (error instanceof DemoInterrupted) {
    process.stderr.write(
      'Demo interrupted: the MCP servers, its workspace and any Errata it started are stopped.\n',
    );
    process.exitCode = error.exitCode;
  } else {
    process.stderr.write(`Demo failed: ${error instanceof DemoError ? error.message : messageOf(error)}\n`);
    if (!(error instanceof DemoError) && error instanceof Error && error.stack)
      process.stderr.write(`${error.stack}\n`);
    process.exitCode = 1;
  }
  // Everything the demo started is stopped; only the export to the Errata that exited is left.
  if (abandonedExport) process.exit();
});
