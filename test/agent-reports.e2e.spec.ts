/**
 * GET /api/v1/reports/escalations, /misclassified-results and /subagent-coverage end to end: an agent runtime
 * instrumented with @errata/sdk calls the seed fixture MCP server, exports over OTLP/HTTP protobuf to a real
 * Errata (PostgreSQL and PGlite), and the reports show what the scenario did (figures worked out by hand below).
 */
import { startErrata, instrumentMcpClient } from '@errata/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { ProjectorService } from '../apps/server/src/services/projector.service';
import { connectSeedServer, playSupportScenario, seedCall } from './support/seed-mcp-server';
import { startTestServer, type Store, type TestServer } from './support/server';

/**
 * The scenario (`playSupportScenario`). Coordinator run "support":
 *  1. process_refund → business error with a customer explanation; escalate to a human (avoidable: explained).
 *  2. lookup_order → transient error; escalate to a human at once (avoidable: never retried).
 *  3. searchSupportTickets → NO_TICKETS_FOUND as an error (empty-as-error), called three times with the same
 *     arguments (2 retries).
 *  4. read_file → "ERROR: Permission denied" with isError false (failure-as-empty).
 * Subagent run "web-research": search_web → rate limited, not retried; a partial report with all four elements.
 * Subagent run "news": lookup_order → transient error, not retried; a report claiming complete (silent partial).
 */

describe.each(['postgres', 'pglite'] as Store[])('agent reports on %s', (store) => {
  let server: TestServer;
  let client: Client;
  let closeSeed: () => Promise<void>;

  beforeAll(async () => {
    server = await startTestServer(store);
    const errata = startErrata({
      endpoint: server.url,
      apiKey: server.ingestKey,
      instrumentMcpSdk: false,
      flushOnExit: false,
    });
    const seed = await connectSeedServer();
    closeSeed = seed.close;
    client = instrumentMcpClient(seed.client);
    await playSupportScenario(client);
    await errata.shutdown();
    await server.catchUp();
  }, 60_000);
  afterAll(async () => {
    await closeSeed?.();
    await server?.close();
  });

  async function get(
    path: string,
    key = server.readKey,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${server.url}/api/v1/reports/${path}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  describe('GET /api/v1/reports/escalations', () => {
    it('attributes both escalations, both avoidable; rates over the 7 failed calls', async () => {
      const { status, body } = await get('escalations');
      expect(status).toBe(200);
      expect(body['totals']).toEqual({
        failures: 7,
        escalations: 2,
        attributed: 2,
        unattributed: 0,
        avoidable: 2,
        rate: 2 / 7,
      });
      expect(body['byTarget']).toEqual({ human: 2, user: 0, coordinator: 0 });
      const rows = Object.fromEntries(
        (body['byCategory'] as { category: string }[]).map(({ category, ...row }) => [category, row]),
      );
      expect(rows['business']).toEqual({ failures: 1, escalations: 1, avoidable: 1, rate: 1 });
      expect(rows['transient']).toEqual({ failures: 3, escalations: 1, avoidable: 1, rate: 1 / 3 });
      expect(rows['empty']).toEqual({ failures: 3, escalations: 0, avoidable: 0, rate: 0 });
    });

    it('filters by agent: the subagents escalated nothing', async () => {
      const { body } = await get('escalations?agent=news');
      expect(body['totals']).toMatchObject({ failures: 1, escalations: 0 });
    });
  });

  describe('GET /api/v1/reports/misclassified-results', () => {
    it('lists the empty-as-error search and the hidden failure, with redacted samples', async () => {
      const { status, body } = await get('misclassified-results');
      expect(status).toBe(200);
      expect(body['totals']).toEqual({ calls: 8, emptyAsError: 3, failureAsEmpty: 1 });
      const groups = body['groups'] as Record<string, unknown>[];
      expect(
        groups.map((g) => [
          g['tool'],
          g['calls'],
          g['emptyAsError'],
          g['failureAsEmpty'],
          g['retriesTriggered'],
        ]),
      ).toEqual([
        ['searchSupportTickets', 3, 3, 0, 2],
        ['read_file', 1, 0, 1, 0],
      ]);
      expect((groups[0]!['samples'] as unknown[]).length).toBe(3);
      expect(groups[1]!['samples']).toEqual([
        expect.objectContaining({ direction: 'failureAsEmpty', text: 'ERROR: Permission denied' }),
      ]);
    });
  });

  describe('GET /api/v1/reports/subagent-coverage', () => {
    it('coverage, propagation, absorption and the silent partial', async () => {
      const { status, body } = await get('subagent-coverage');
      expect(status).toBe(200);
      expect(body).toMatchObject({
        reports: 2,
        complete: 1,
        partial: 1,
        failed: 0,
        meanCoverage: 0.875,
        propagationCompleteness: 1,
        missingElements: { category: 0, attempted: 0, partialResults: 0, alternatives: 0 },
        transientFailuresInSubagents: 2,
        absorbedTransientFailures: 0,
        localAbsorptionRate: 0,
        silentPartials: 1,
      });
    });
  });

  describe('GET /api/v1/findings', () => {
    it('lists the contract violations of the scenario, pages them, and shows one with samples by id', async () => {
      const response = await fetch(`${server.url}/api/v1/findings`, {
        headers: { authorization: `Bearer ${server.readKey}` },
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { total: number; findings: Record<string, unknown>[] };
      expect(body.total).toBe(2);
      expect(
        body.findings.map((f) => [
          f['rule'],
          f['server'],
          f['tool'],
          f['count'],
          f['rate'],
          f['retriesCaused'],
        ]),
      ).toEqual([
        ['empty-as-error', 'seed-fixtures', 'searchSupportTickets', 3, 1, 2],
        ['failure-as-empty', 'seed-fixtures', 'read_file', 1, 1, 0],
      ]);
      expect(body.findings[0]).toMatchObject({
        serverVersions: ['1.4.0'],
        evidence: { 'empty:declared_not_found': 3 },
      });
      expect(body.findings[0]!['samples']).toBeUndefined();

      const page = (await (
        await fetch(`${server.url}/api/v1/findings?limit=1&offset=1&rule=failure-as-empty`, {
          headers: { authorization: `Bearer ${server.readKey}` },
        })
      ).json()) as { total: number; findings: unknown[] };
      expect(page).toMatchObject({ total: 1, findings: [] });

      const one = await fetch(`${server.url}/api/v1/findings/${String(body.findings[1]!['id'])}`, {
        headers: { authorization: `Bearer ${server.readKey}` },
      });
      expect(one.status).toBe(200);
      const detail = (await one.json()) as {
        id: string;
        rule: string;
        samples: unknown[];
        suggestedContract: unknown;
      };
      expect(detail.samples).toEqual([
        expect.objectContaining({ evidence: 'failure.leading_word', text: 'ERROR: Permission denied' }),
      ]);
      // The fix: a failure that says so, with its category, in the envelope the seeds recommend.
      expect(detail.suggestedContract).toMatchObject({
        findingId: detail.id,
        rule: detail.rule,
        result: {
          isError: true,
          structuredContent: { errorCategory: expect.any(String), isRetryable: expect.any(Boolean) },
        },
        markdown: expect.stringContaining(`Errata finding \`${detail.id}\``),
      });
    });

    it('GET /api/v1/servers grades the fixture server from its calls that violate a rule', async () => {
      const { status, body } = await get('../servers');
      expect(status).toBe(200);
      const [only] = body['servers'] as Record<string, unknown>[];
      expect(only).toMatchObject({
        server: 'seed-fixtures',
        versions: ['1.4.0'],
        calls: 8,
        failures: 7,
        violatingCalls: 4,
        grade: 'F',
      });
      const tools = Object.fromEntries(
        (only!['tools'] as { tool: string; grade: string }[]).map((t) => [t.tool, t.grade]),
      );
      expect(tools).toEqual({
        lookup_order: 'A',
        process_refund: 'A',
        read_file: 'F',
        search_web: 'A',
        searchSupportTickets: 'F',
      });
    });

    it('404 for an unknown id, 400 for a malformed one or a bad rule / limit', async () => {
      const status = async (path: string) =>
        (
          await fetch(`${server.url}/api/v1/findings${path}`, {
            headers: { authorization: `Bearer ${server.readKey}` },
          })
        ).status;
      expect(await status('/0123456789abcdef0123')).toBe(404);
      expect(await status('/nope')).toBe(400);
      expect(await status('?rule=bad-rule')).toBe(400);
      expect(await status('?limit=0')).toBe(400);
    });
  });

  describe('GET /api/v1/traces/{traceId}', () => {
    interface Timeline {
      traceId: string;
      runs: {
        runId: string;
        agentName: string | null;
        role: string | null;
        isSubagent: boolean;
        parentRunId: string | null;
      }[];
      items: {
        kind: string;
        spanId: string;
        runId: string;
        tool?: string;
        outcome?: string;
        misclassified?: string | null;
        retry?: { of: string; at: { traceId: string; runId: string }; label: string; wasted: boolean } | null;
        attributedTo?: string | null;
        avoidable?: string | null;
        status?: string;
        silentPartial?: boolean;
        missingElements?: string[];
        categorySource?: string | null;
        evidence?: string | null;
      }[];
    }

    async function timeline(key = server.readKey): Promise<{ status: number; body: Timeline }> {
      const misclassified = (await get('misclassified-results')).body['groups'] as {
        samples: { traceId: string }[];
      }[];
      const traceId = misclassified[0]!.samples[0]!.traceId;
      const response = await fetch(`${server.url}/api/v1/traces/${traceId}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return { status: response.status, body: (await response.json()) as Timeline };
    }

    it('gives the coordinator and both subagent runs, each with its calls, retries, escalations and reports in order', async () => {
      const { status, body } = await timeline();
      expect(status).toBe(200);
      const [support, web, news] = body.runs;
      expect(body.runs.map((run) => [run.agentName, run.role, run.isSubagent])).toEqual([
        ['support', 'coordinator', false],
        ['web-research', 'subagent', true],
        ['news', 'subagent', true],
      ]);
      expect([web!.parentRunId, news!.parentRunId]).toEqual([support!.runId, support!.runId]);

      const of = (runId: string) => body.items.filter((item) => item.runId === runId);
      const coordinator = of(support!.runId);
      expect(coordinator.map((item) => [item.kind, item.tool ?? null])).toEqual([
        ['call', seedCall('business with retriable').name],
        ['escalation', null],
        ['call', seedCall('lookup_order transient').name],
        ['escalation', null],
        ['call', seedCall('searchSupportTickets NO_TICKETS_FOUND').name],
        ['call', seedCall('searchSupportTickets NO_TICKETS_FOUND').name],
        ['call', seedCall('searchSupportTickets NO_TICKETS_FOUND').name],
        ['call', seedCall('hidden failure: isError false with "ERROR').name],
      ]);
      const [refund, refundEscalation, lookup, lookupEscalation, search1, search2, search3, hidden] =
        coordinator;
      expect(refundEscalation).toMatchObject({ attributedTo: refund!.spanId, avoidable: expect.any(String) });
      expect(lookupEscalation).toMatchObject({ attributedTo: lookup!.spanId, avoidable: expect.any(String) });
      expect([search1, search2, search3].map((call) => call!.misclassified)).toEqual([
        'emptyAsError',
        'emptyAsError',
        'emptyAsError',
      ]);
      expect(search1!.retry).toBeNull();
      // Each names the call it retries and where it is: here, in the same run
      const here = { traceId: body.traceId, runId: support!.runId };
      expect(search2!.retry).toEqual({
        of: search1!.spanId,
        at: here,
        label: 'misclassified_empty',
        wasted: true,
      });
      expect(search3!.retry).toEqual({
        of: search2!.spanId,
        at: here,
        label: 'misclassified_empty',
        wasted: true,
      });
      expect(hidden).toMatchObject({ outcome: 'ok', misclassified: 'failureAsEmpty' });
      // How each was classified: declared by the server, or a failure signal in a success's result.
      expect([refund, lookup, search1, hidden].map((call) => [call!.categorySource, call!.evidence])).toEqual(
        [
          ['declared', 'declared:business'],
          ['declared', 'declared:transient'],
          ['declared', 'empty:declared_not_found'],
          [null, 'failure.leading_word'],
        ],
      );

      expect(of(web!.runId).map((item) => [item.kind, item.status ?? null])).toEqual([
        ['call', null],
        ['report', 'partial'],
      ]);
      expect(of(web!.runId)[1]).toMatchObject({ missingElements: [], silentPartial: false });
      expect(of(news!.runId)[1]).toMatchObject({ kind: 'report', status: 'complete', silentPartial: true });
    });

    it('404 for a trace the project does not have, also when another project has it; 400 for a malformed id', async () => {
      const other = await server.app.get(ProjectRepository).ensureProject('timeline-stranger');
      const { key } = await server.app.get(ApiKeyService).create(other.id, 'read', 'cli');
      expect((await timeline(key)).status).toBe(404);
      const status = async (id: string) =>
        (
          await fetch(`${server.url}/api/v1/traces/${id}`, {
            headers: { authorization: `Bearer ${server.readKey}` },
          })
        ).status;
      expect(await status('0'.repeat(31) + '1')).toBe(404);
      expect(await status('not-a-trace')).toBe(400);
      expect(await status('ABCDEF' + '0'.repeat(26))).toBe(400);
    });
  });

  describe('project isolation', () => {
    it("a read key of another project sees nothing of this one on any endpoint, and this project's finding ids answer 404", async () => {
      const other = await server.app.get(ProjectRepository).ensureProject('other-team');
      const { key } = await server.app.get(ApiKeyService).create(other.id, 'read', 'cli');
      const read = async (path: string) => {
        const response = await fetch(`${server.url}/api/v1/${path}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      expect((await read('reports/retry-waste')).body['totals']).toMatchObject({ calls: 0, retries: 0 });
      expect((await read('reports/escalations')).body['totals']).toMatchObject({
        failures: 0,
        escalations: 0,
      });
      expect((await read('reports/misclassified-results')).body).toMatchObject({
        totals: { calls: 0 },
        groups: [],
      });
      expect((await read('reports/subagent-coverage')).body).toMatchObject({ reports: 0, silentPartials: 0 });
      expect((await read('findings')).body).toMatchObject({ total: 0, findings: [] });
      expect((await read('servers')).body).toMatchObject({ servers: [] });
      const since = new Date(Date.now() - 2 * 3_600_000).toISOString();
      const series = (await read(`reports/timeseries?from=${since}`)).body['points'] as { calls: number }[];
      expect(series.length).toBeGreaterThan(0);
      expect(series.every((point) => point.calls === 0)).toBe(true);
      const ourSeries = (await get(`timeseries?from=${since}`)).body['points'] as { calls: number }[];
      expect(ourSeries.reduce((sum, point) => sum + point.calls, 0)).toBe(8);
      const ours = (await get('../findings')).body['findings'] as { id: string }[];
      expect(ours.length).toBeGreaterThan(0);
      for (const { id } of ours) expect((await read(`findings/${id}`)).status).toBe(404);
    });
  });

  describe('rebuild', () => {
    it('gives byte-identical reports after the read models are rebuilt from the log', async () => {
      const paths = ['escalations', 'misclassified-results', 'subagent-coverage', '../findings'];
      const before = await Promise.all(paths.map(async (path) => JSON.stringify((await get(path)).body)));
      await server.app.get(ProjectorService).rebuild();
      const after = await Promise.all(paths.map(async (path) => JSON.stringify((await get(path)).body)));
      expect(after).toEqual(before);
    });
  });

  describe('parameters and keys', () => {
    it('a groupBy is refused with 400 on reports that have none; an ingest key with 403', async () => {
      const grouped = await get('escalations?groupBy=category');
      expect(grouped.status).toBe(400);
      expect(grouped.body['message']).toMatch(/unknown query parameter "groupBy"/);
      expect((await get('subagent-coverage', server.ingestKey)).status).toBe(403);
    });
  });
});
