// One timed ingest run, end to end: fresh database, fresh server, warm-up, the timed requests with CPU accounting
// around them, then the checks that every acknowledged span was stored (and projected).
import { sendAll } from './client.mjs';
import { machineBusyCpu, postgresCpu, postgresCpuSince, procCpu, procStatusMb } from './cpu.mjs';
import {
  checkpoint,
  countEvents,
  countToolCalls,
  createDatabase,
  dropDatabase,
  fingerprint,
  waitForProjection,
  withClient,
} from './postgres.mjs';
import { ingestRunLine, percentile, problems } from './report.mjs';
import { startServer, stopServer, ServerError } from './server.mjs';
import { CONCURRENCY } from './settings.mjs';

export async function ingestRun(index, bodies, warmupBodies) {
  const database = await createDatabase();
  let server;
  try {
    server = await startServer(database);
    const warmup = warmupBodies.length > 0 ? await sendAll(server.port, warmupBodies, CONCURRENCY) : null;
    if (server.exit) throw new ServerError(server, 'server died during warm-up');
    await checkpoint();

    const pgBefore = postgresCpu();
    const serverBefore = procCpu(server.pid);
    const mainThreadBefore = procCpu(`${server.pid}/task/${server.pid}`);
    const machineBefore = machineBusyCpu();
    const clientBefore = process.cpuUsage();
    const result = await sendAll(server.port, bodies, CONCURRENCY);
    const clientCpu = process.cpuUsage(clientBefore);
    const serverAfter = procCpu(server.pid);
    const mainThreadAfter = procCpu(`${server.pid}/task/${server.pid}`);
    const machineCpu = machineBusyCpu() - machineBefore;
    const pgCpu = await postgresCpuSince(pgBefore, database);
    const serverCpu = serverAfter.own - serverBefore.own;
    const mainThreadCpu = mainThreadAfter.own - mainThreadBefore.own;
    const clientCpuSeconds = (clientCpu.user + clientCpu.system) / 1e6;
    const otherCpu = Math.max(0, machineCpu - serverCpu - pgCpu - clientCpuSeconds);
    if (server.exit) throw new ServerError(server, `server died during run ${index}`);

    const stored = await countEvents(database);
    const expected = result.ackedSpans + (warmup?.ackedSpans ?? 0);
    // The projector (tool_call read model) runs in the same process; how far behind it is when the last request
    // is acknowledged, and how long it then takes to catch up, shows whether ingest borrowed CPU from it.
    const projectedAtEnd = await countToolCalls(database);
    const catchUpSeconds = await waitForProjection(database, stored);
    const peakRssMb = procStatusMb(server.pid, 'VmHWM');
    if (server.exit) throw new ServerError(server, `server died after run ${index}`);
    const measured = await fingerprint(database);
    const projectRows = await withClient(database, (c) =>
      c.query(`SELECT id FROM project WHERE name = 'default'`),
    );

    const failed = [...result.failures].map(([status, { count, sample }]) => `${count}× ${status} ${sample}`);
    const run = {
      spansPerSecond: result.ackedSpans / result.seconds,
      seconds: result.seconds,
      ackedSpans: result.ackedSpans,
      peakRssMb,
      p50Ms: percentile(result.latencies, 50),
      p99Ms: percentile(result.latencies, 99),
      cpuSeconds: {
        server: serverCpu,
        serverMainThread: mainThreadCpu,
        postgres: pgCpu,
        client: clientCpuSeconds,
        other: otherCpu,
      },
      projectorBacklogAtEnd: stored - projectedAtEnd,
      projectorCatchUpSeconds: catchUpSeconds,
      fingerprint: measured,
      projectId: projectRows.rows[0]?.id ?? 1,
    };
    console.log(ingestRunLine(index, run, stored));
    if (failed.length > 0) {
      problems.push(`run ${index}: non-200 answers: ${failed.join('; ')}`);
      console.log(`  !! non-200 answers: ${failed.join('; ')}`);
    }
    if (result.partial > 0) problems.push(`run ${index}: ${result.partial} partial-success answers`);
    if (warmup && warmup.ackedRequests !== warmupBodies.length)
      problems.push(`run ${index}: warm-up requests failed`);
    if (stored !== expected) {
      throw new Error(
        `run ${index}: SELECT count(*) FROM event = ${stored}, but ${expected} spans were acknowledged ` +
          `(${result.ackedSpans} timed + ${warmup?.ackedSpans ?? 0} warm-up)`,
      );
    }
    return run;
  } catch (error) {
    if (server && server.exit && !(error instanceof ServerError))
      throw new ServerError(server, error.message);
    throw error;
  } finally {
    if (server) {
      const exit = await stopServer(server);
      if (exit.code !== 0 && exit.signal !== 'SIGTERM') {
        problems.push(`run ${index}: server exited with code ${exit.code}, signal ${exit.signal} on SIGTERM`);
      }
    }
    await dropDatabase(database);
  }
}
