import { Inject, Injectable } from '@nestjs/common';
import {
  CALL_MEASURES,
  offenceKey,
  type CallMeasure,
  type CallSums,
  type FindingContribution,
  type FindingRule,
  type FindingSums,
  type FoldedSeriesSums,
  type OffenceTimeline,
  type ReportSums,
  type RetryWasteGroupBy,
  type RetryWasteGroupDimensions,
  SCORECARD_MEASURES,
  STEP_MS,
  type SeriesStep,
  type ServerTotals,
  type WastedRetry,
  UNKNOWN_SERVER,
  type VersionTraffic,
} from '@errata/domain';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { DATABASE, type Database } from '../database/database';
import type { DB } from '../database/schema';
import { hourGaps, windowSlices, type SeriesBucket, type TimeRange } from '../rollups/window-slices';
import {
  CALL_ROLLUP,
  dimensionSources,
  FINDING_ROLLUP,
  list,
  measureValues,
  REPORT_ROLLUP,
  type RollupShape,
} from './rollup-shapes';

export interface RollupFilter {
  readonly projectId: number;
  readonly from: Date | null;
  readonly to: Date | null;
  readonly server: string | null;
  readonly tool: string | null;
  /** An agent name or id. */
  readonly agent: string | null;
  /** Only these servers (null: the calls whose server did not say its name), as a page of a report selects them. */
  readonly servers?: readonly (string | null)[];
  /** Only these (server, tool) pairs, as the scorecard's listed tools select their findings. */
  readonly serverTools?: readonly { readonly server: string | null; readonly tool: string }[];
}

/**
 * How a report's page of call-sum groups is made: grouped by these call dimensions, groups kept by `having` (over
 * the sums: `sum(retries) > 0`), ranked by `orderBy` (over the summed measures by name, ending on the group's
 * dimensions so that the order is total), cut at `limit` after `offset`.
 */
export interface CallGroupPage {
  readonly groupBy: readonly string[];
  readonly having: RawBuilder<boolean>;
  readonly orderBy: RawBuilder<unknown>;
  readonly limit: number;
  readonly offset: number;
}

/** A finding whose offences to look up: (server, tool, rule). */
export interface OffenceGroup {
  readonly server: string | null;
  readonly tool: string;
  readonly rule: FindingRule;
}

/** The server, tool and agent names of a window's items, each list cut at a limit, with how many there are. */
export interface CallNames {
  readonly servers: readonly (string | null)[];
  readonly serverCount: number;
  readonly tools: readonly string[];
  readonly toolCount: number;
  readonly agents: readonly string[];
  readonly agentCount: number;
}

const TRUE = sql<boolean>`TRUE`;

const UNKNOWN = sql.lit(UNKNOWN_SERVER);

/**
 * The retry-waste report's groups in SQL (`groupOf` in libs/domain): the call dimensions it tells them apart by; the
 * key the time series names a group by (`wastedRetriesBy`); and the order of groups the report ranks alike (a page's
 * last tie-breakers: name, then the server that said none before one named "(unknown)").
 */
const RETRY_WASTE_GROUPS: Record<
  RetryWasteGroupBy,
  {
    readonly dimensions: readonly string[];
    readonly key: RawBuilder<unknown>;
    readonly order: RawBuilder<unknown>;
  }
> = {
  category: {
    dimensions: ['category'],
    key: sql`category`,
    order: sql`coalesce(category, 'unknown') COLLATE "C", category IS NOT NULL`,
  },
  server: {
    dimensions: ['server'],
    key: sql`coalesce(server, ${UNKNOWN})`,
    order: sql`coalesce(server, ${UNKNOWN}) COLLATE "C", coalesce(server, '') COLLATE "C", server IS NOT NULL`,
  },
  tool: {
    dimensions: ['server', 'tool'],
    key: sql`coalesce(server, ${UNKNOWN}) || '/' || coalesce(tool, 'null')`,
    order: sql`(coalesce(server, ${UNKNOWN}) || '/' || tool) COLLATE "C", coalesce(server, '') COLLATE "C",
               server IS NOT NULL, tool COLLATE "C"`,
  },
};
const FALSE = sql<boolean>`FALSE`;

function within(column: RawBuilder<unknown>, range: TimeRange): RawBuilder<boolean> {
  const bounds = [
    ...(range.from === null ? [] : [sql`${column} >= ${range.from}`]),
    ...(range.to === null ? [] : [sql`${column} < ${range.to}`]),
  ];
  return bounds.length === 0 ? TRUE : sql<boolean>`(${sql.join(bounds, sql` AND `)})`;
}

const anyOf = (conditions: readonly RawBuilder<boolean>[]): RawBuilder<boolean> =>
  conditions.length === 0 ? FALSE : sql<boolean>`(${sql.join(conditions, sql` OR `)})`;

/** Span times are nanoseconds since 1970 in a bigint column: a window edge before 1970 or after 2262 is one of its ends. */
const MAX_NS = 2n ** 63n - 1n;
const nsOf = (time: Date): string => {
  const ns = BigInt(time.getTime()) * 1_000_000n;
  return (ns < 0n ? 0n : ns > MAX_NS ? MAX_NS : ns).toString();
};

/** A span start (nanoseconds, `column`) within the filter's window. */
const startedWithin = (column: RawBuilder<unknown>, filter: RollupFilter): RawBuilder<boolean> =>
  sql<boolean>`${filter.from === null ? TRUE : sql`${column} >= ${nsOf(filter.from)}::bigint`}
    AND ${filter.to === null ? TRUE : sql`${column} < ${nsOf(filter.to)}::bigint`}`;

/**
 * Report reads: sums of the rollups over a window — whole days and hours from the rollups, the partial hours at
 * its edges from the contributions — and a finding's earliest and latest offences. Nothing here reads the event
 * log or scans a window's raw rows beyond its first and last partial hour.
 */
@Injectable()
export class RollupQueryRepository {
  private readonly db: Kysely<DB>;

  constructor(@Inject(DATABASE) database: Database) {
    this.db = database.db;
  }

  /**
   * Runs `read` with this repository's reads, all from one snapshot: a report made of several reads (calls, findings,
   * subagent reports, samples) sees one state of the rollups. Read apart, a batch the projector committed between
   * two of them gave a finding more offences than its tool had calls (a rate above 1), or a group without its samples.
   * The reads share one connection, so they run one after another.
   */
  async snapshot<T>(read: (reads: RollupQueryRepository) => Promise<T>): Promise<T> {
    return this.inOneSnapshot((trx) => {
      // The prototype is this repository, so the reads are its own, on the transaction's connection.
      const reads: RollupQueryRepository = Object.create(this);
      Object.defineProperty(reads, 'db', { value: trx });
      return read(reads);
    });
  }

  /** `read` in a repeatable-read transaction, or in the one under way (`snapshot`): one snapshot for its statements. */
  private inOneSnapshot<T>(read: (db: Kysely<DB>) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) return read(this.db);
    return this.db.transaction().setIsolationLevel('repeatable read').execute(read);
  }

  /** Call sums per server, tool, version and category; only `measures` are summed (the others read 0). */
  async callSums(
    filter: RollupFilter,
    measures: readonly CallMeasure[] = CALL_MEASURES,
  ): Promise<CallSums[]> {
    const rows = await this.sums(
      CALL_ROLLUP,
      filter,
      ['server', 'tool', 'server_version', 'category'],
      measures,
    );
    return rows.map(callSumsOf);
  }

  async findingSums(filter: RollupFilter): Promise<FindingSums[]> {
    const rows = await this.sums(FINDING_ROLLUP, filter, [
      'server',
      'tool',
      'rule',
      'evidence',
      'server_version',
    ]);
    return rows.map((row) => ({
      server: row.server ?? null,
      tool: row.tool!,
      rule: row.rule as FindingRule,
      evidence: row.evidence!,
      serverVersion: row.server_version ?? null,
      sums: measuresOf(row, FINDING_ROLLUP.measures) as FindingSums['sums'],
    }));
  }

  /**
   * Per finding of `since` (index in it → its traffic), the calls of its tool, their failures and the offences of its
   * rule per server version, among the calls that started at its `from` or later; calls of no version are left out. Whole days and
   * hours come from the rollups, each finding's partial first hour from the contributions. One statement, so one
   * snapshot, for every finding: a fix round reads its project's traffic at once, where a read per finding made a
   * round over thousands of them take minutes.
   */
  async versionTrafficSince(
    projectId: number,
    since: readonly (OffenceGroup & { readonly from: Date })[],
  ): Promise<Map<number, VersionTraffic[]>> {
    const traffic = new Map<number, VersionTraffic[]>();
    if (since.length === 0) return traffic;
    const windows = since.map(({ from }) => {
      const slices = windowSlices(from, null);
      return { raw: slices.raw[0] ?? null, hours: slices.hours[0] ?? null, days: slices.days[0] ?? null };
    });
    const column = (edge: (w: (typeof windows)[number]) => Date | null | undefined) =>
      windows.map((w) => edge(w) ?? null);
    // Rows of either kind, as one: a call row has no rule and counts calls and failures, a finding row offences.
    const MEASURES = ['calls', 'failures', 'offences'] as const;
    const SUMMED: Record<'calls' | 'offences', readonly string[]> = {
      calls: ['calls', 'failures'],
      offences: ['offences'],
    };
    const counted = (kind: 'calls' | 'offences', value: (measure: string) => RawBuilder<unknown>) =>
      sql.join(
        MEASURES.map((m) => sql`${SUMMED[kind].includes(m) ? value(m) : sql`0::bigint`} AS ${sql.ref(m)}`),
      );
    const rows = (shape: RollupShape, rule: RawBuilder<unknown>, kind: 'calls' | 'offences') => sql`
      SELECT server, tool, ${rule} AS rule, server_version, bucket_hours, bucket AS at, ${counted(kind, (m) => sql.ref(m))}
        FROM ${sql.table(shape.table)}
       WHERE project_id = ${projectId} AND by_agent = false AND bucket >= (SELECT min(least(hour_from, day_from)) FROM g)
         AND server_version IS NOT NULL AND tool IS NOT NULL`;
    // A finding's partial first hour: each such hour's contributions are read once, for every finding it starts.
    const raw = (shape: RollupShape, rule: RawBuilder<unknown>, kind: 'calls' | 'offences') => sql`
      SELECT c.server, c.tool, ${rule} AS rule, c.server_version, 0 AS bucket_hours, c.start_time AS at,
             ${counted(kind, (m) => sql`coalesce((c.measures->>${m})::bigint, 0)`)}
        FROM (SELECT DISTINCT raw_to FROM g WHERE raw_to IS NOT NULL) AS h
       CROSS JOIN LATERAL (
               SELECT server, tool, part, server_version, start_time, measures
                 FROM contribution
                WHERE project_id = ${projectId} AND kind = ${shape.kind}
                  AND start_time >= h.raw_to - interval '1 hour' AND start_time < h.raw_to) AS c
       WHERE c.server_version IS NOT NULL AND c.tool IS NOT NULL`;
    const { rows: sums } = await sql<{
      i: string;
      version: string;
      calls: string;
      failures: string;
      offences: string;
    }>`
      WITH g AS (
        SELECT server, tool, rule, raw_from, raw_to, hour_from, hour_to, day_from, i
          FROM unnest(${since.map((f) => f.server)}::text[], ${since.map((f) => f.tool)}::text[],
                             ${since.map((f) => f.rule)}::text[], ${column((w) => w.raw?.from)}::timestamptz[],
                             ${column((w) => w.raw?.to)}::timestamptz[], ${column((w) => w.hours?.from)}::timestamptz[],
                             ${column((w) => w.hours?.to)}::timestamptz[], ${column((w) => w.days?.from)}::timestamptz[])
                 WITH ORDINALITY AS g (server, tool, rule, raw_from, raw_to, hour_from, hour_to, day_from, i)),
      s AS (
        ${rows(CALL_ROLLUP, sql`NULL::text`, 'calls')}
        UNION ALL ${rows(FINDING_ROLLUP, sql`rule`, 'offences')}
        UNION ALL ${raw(CALL_ROLLUP, sql`NULL::text`, 'calls')}
        UNION ALL ${raw(FINDING_ROLLUP, sql`c.part`, 'offences')})
      SELECT g.i::text AS i, s.server_version AS version, sum(s.calls)::text AS calls,
             sum(s.failures)::text AS failures, sum(s.offences)::text AS offences
        FROM g JOIN s
          -- A null server (one that did not say its name) is a server of its own, apart from one named "".
          ON coalesce(s.server, '') = coalesce(g.server, '') AND s.server IS NOT DISTINCT FROM g.server
         AND s.tool = g.tool AND (s.rule IS NULL OR s.rule = g.rule)
       WHERE CASE s.bucket_hours WHEN 24 THEN s.at >= g.day_from
                                 WHEN 1 THEN s.at >= g.hour_from AND s.at < g.hour_to
                                 ELSE s.at >= g.raw_from AND s.at < g.raw_to END
       GROUP BY g.i, s.server_version`.execute(this.db);
    for (const row of sums) {
      const index = Number(row.i) - 1;
      const version = {
        version: row.version,
        calls: Number(row.calls),
        failures: Number(row.failures),
        offences: Number(row.offences),
      };
      traffic.set(index, [...(traffic.get(index) ?? []), version]);
    }
    return traffic;
  }

  /**
   * The latest `limit` wasted retries of each retry-waste group in the window (the report's filters applied), by the
   * dimensions `groupBy` keys groups by (`wastedRetryGroups`), newest first. One index probe per group.
   */
  async latestWastedRetries(
    filter: RollupFilter,
    groupBy: RetryWasteGroupBy,
    groups: readonly RetryWasteGroupDimensions[],
    limit: number,
  ): Promise<WastedRetry[]> {
    if (groups.length === 0) return [];
    const ofGroup = {
      category: sql<boolean>`category = g.category`,
      server: sql<boolean>`coalesce(server, '') = coalesce(g.server, '') AND server IS NOT DISTINCT FROM g.server`,
      tool: sql<boolean>`coalesce(server, '') = coalesce(g.server, '') AND server IS NOT DISTINCT FROM g.server
                         AND tool = g.tool`,
    }[groupBy];
    const { rows } = await sql<{
      traceId: string;
      spanId: string;
      startNs: string;
      agentName: string | null;
      agentId: string | null;
      category: string | null;
      server: string | null;
      tool: string | null;
      measures: WastedRetry['measures'];
    }>`
      SELECT encode(w.trace_id, 'hex') AS "traceId", encode(w.span_id, 'hex') AS "spanId",
             w.start_ns::text AS "startNs", w.agent_name AS "agentName", w.agent_id AS "agentId", w.category,
             w.server, w.tool, w.measures
        FROM unnest(${groups.map((g) => g.category)}::text[], ${groups.map((g) => g.server)}::text[],
                    ${groups.map((g) => g.tool)}::text[]) AS g (category, server, tool)
       CROSS JOIN LATERAL (
               SELECT trace_id, span_id, start_ns, agent_name, agent_id, category, server, tool, measures
                 FROM contribution
                -- The partial indexes' predicate, as literals.
                WHERE project_id = ${filter.projectId} AND kind = 'call' AND part = 'retry'
                  AND measures ? 'wasted_retries' AND ${ofGroup}
                  AND ${startedWithin(sql`start_ns`, filter)}
                  AND ${filterConditions(filter, CALL_ROLLUP)}
                ORDER BY start_ns DESC, span_id DESC, trace_id DESC
                LIMIT ${limit}) w`.execute(this.db);
    return rows.map((row) => ({
      traceId: row.traceId,
      key: row.spanId,
      startNs: BigInt(row.startNs),
      agentName: row.agentName,
      agentId: row.agentId,
      category: row.category,
      server: row.server,
      tool: row.tool,
      measures: row.measures,
    }));
  }

  /**
   * A page of the retry-waste report's groups (`RetryWasteGroupBy`): those with retries or unrecovered chains, in
   * the report's order (wasted ms, wasted retries and retries descending, then key, server, tool), one row per group.
   */
  retryWastePage(
    filter: RollupFilter,
    measures: readonly CallMeasure[],
    groupBy: RetryWasteGroupBy,
    limit: number,
    offset: number,
  ) {
    const byGroup = RETRY_WASTE_GROUPS[groupBy];
    return this.callSumsPage(filter, measures, {
      groupBy: byGroup.dimensions,
      having: sql<boolean>`sum(retries) > 0 OR sum(unrecovered_chains) > 0`,
      // wastedMs as the report rounds it (half up), so that groups the report shows alike are ordered alike.
      orderBy: sql`floor((wasted_ns + 500000) / 1000000) DESC, wasted_retries DESC, retries DESC, ${byGroup.order}`,
      limit,
      offset,
    });
  }

  /**
   * A page of the misclassified-results report's groups (server, tool): those with an offence, most offences first,
   * then server (none first) and tool; one row per group.
   */
  misclassifiedPage(filter: RollupFilter, measures: readonly CallMeasure[], limit: number, offset: number) {
    return this.callSumsPage(filter, measures, {
      groupBy: ['server', 'tool'],
      having: sql<boolean>`tool IS NOT NULL AND sum(empty_as_error) + sum(failure_as_empty) > 0`,
      orderBy: sql`empty_as_error + failure_as_empty DESC, server COLLATE "C" NULLS FIRST, tool COLLATE "C"`,
      limit,
      offset,
    });
  }

  /**
   * A page of the server scorecard: the servers with calls of a tool in the scorecard's order (by name, those whose
   * server did not say its name first), cut at `page`, with how many there are; each page server's totals and
   * versions over all its tools, and `toolPage.limit` of its tools after the first `toolPage.offset` in the
   * scorecard's order (`compareToolScores`: most violating calls, then most calls, then name) with how many tools it
   * has. One read of the window's rows, summed per server, per server version and per tool at once (grouping sets),
   * ranked and cut in SQL: a server with thousands of tools answers its top ones without the others being read out of
   * the database.
   */
  async scorecardPage(
    filter: RollupFilter,
    page: { readonly limit: number; readonly offset: number },
    toolPage: { readonly limit: number; readonly offset: number },
  ): Promise<{ groupCount: number; totals: ServerTotals[]; tools: CallSums[] }> {
    const measures = SCORECARD_MEASURES;
    const shape = { ...CALL_ROLLUP, measures };
    const summed = list(measures.map((m) => `sum(${m}) AS ${m}`));
    const asText = list(measures.map((m) => `r.${m}::text AS ${m}`));
    // grouping(server_version, tool): 3 for a server's row, 1 for a server version's, 2 for a tool's.
    type Row = Record<string, string | null> & {
      server_count: string;
      grouping_set: number | null;
      tool_count: string;
    };
    // The window's edges are looked up first: one snapshot for both.
    const { rows } = await this.inOneSnapshot(async (trx) =>
      sql<Row>`
      WITH g AS (
        SELECT server, server_version, tool, grouping(server_version, tool) AS grouping_set, ${summed}
          ${await this.windowRows(trx, shape, filter, ['server', 'server_version', 'tool'])} AND tool IS NOT NULL
         GROUP BY GROUPING SETS ((server), (server, server_version), (server, tool))
        HAVING sum(calls) > 0),
      page AS (
        SELECT server FROM g WHERE grouping_set = 3
         ORDER BY server COLLATE "C" NULLS FIRST LIMIT ${page.limit} OFFSET ${page.offset}),
      r AS (
        SELECT g.*,
               row_number() OVER (PARTITION BY g.grouping_set, g.server
                                  ORDER BY g.violating_calls DESC, g.calls DESC, g.tool COLLATE "C") AS rank,
               -- On every row of a server, its versions' too: a tool page past its last tool still says how many.
               count(*) FILTER (WHERE g.grouping_set = 2) OVER (PARTITION BY g.server) AS tool_count
          FROM g JOIN page
            ON (coalesce(g.server, ''), g.server IS NULL) = (coalesce(page.server, ''), page.server IS NULL)
         WHERE g.grouping_set <> 3)
      SELECT (SELECT count(*) FROM g WHERE grouping_set = 3)::text AS server_count,
             r.grouping_set, r.server, r.server_version, r.tool, ${asText}, r.tool_count::text AS tool_count
        FROM (SELECT 1) AS one
        LEFT JOIN r ON r.grouping_set = 1
                    OR r.rank BETWEEN ${toolPage.offset + 1} AND ${toolPage.offset + toolPage.limit}`.execute(
        trx,
      ),
    );
    // Past the last server the one row left-joined to nothing only carries the count.
    const versions = rows.filter((row) => row.grouping_set === 1);
    const tools = rows.filter((row) => row.grouping_set === 2);
    const toolCounts = new Map(versions.map((row) => [row['server'] ?? null, Number(row.tool_count)]));
    const totals = new Map<string | null, ServerTotals>();
    for (const row of versions) {
      const server = row['server'] ?? null;
      const sums = measuresOf(row, measures);
      const before = totals.get(server);
      totals.set(server, {
        server,
        versions: [
          ...(before?.versions ?? []),
          ...(row['server_version'] === null ? [] : [row['server_version']!]),
        ],
        calls: (before?.calls ?? 0n) + sums['calls']!,
        failures: (before?.failures ?? 0n) + sums['failures']!,
        violatingCalls: (before?.violatingCalls ?? 0n) + sums['violating_calls']!,
        toolCount: toolCounts.get(server) ?? 0,
      });
    }
    return {
      groupCount: Number(rows[0]!.server_count),
      totals: [...totals.values()],
      tools: tools.map(callSumsOf),
    };
  }

  /**
   * The names a filter can choose from in the window: the servers with calls (null: those whose server did not say
   * its name), the distinct tool names of `filter.server`'s calls (of every server's without it), and the agents whose
   * runs made calls or escalations or sent subagent reports (each by the name `agentCondition` selects it by: its
   * name, or its id when it has none; a run of neither is no agent's), each by name, the first `limit` of them, with
   * how many there are. Only `calls`, `escalations` and `reports` count, to leave out names whose items were all
   * taken back out of a rollup row; agent and tool filters do not apply. With `search`, each list (and its count) keeps
   * the names that contain it, in any case; the null server goes by its label, `(unknown)`. The match runs over the
   * window's distinct names, thousands at most, not over the rollup rows: no index is needed for it. One snapshot.
   */
  async callNames(filter: RollupFilter, limit: number, search: string | null): Promise<CallNames> {
    const shape = { ...CALL_ROLLUP, measures: ['calls'] };
    const window = { ...filter, server: null, tool: null, agent: null };
    const toolsOf = filter.server === null ? TRUE : serverCondition(filter.server, shape);
    return this.inOneSnapshot(async (trx) => {
      // A row with a tool is a call's; those without are escalations no failure explains.
      const { rows } = await sql<{
        server_count: string;
        servers: (string | null)[];
        tool_count: string;
        tools: string[];
        agent_count: string;
        agents: string[];
      }>`
          WITH p AS (
            SELECT server, tool
              ${await this.windowRows(trx, shape, window, ['server', 'tool'])} AND tool IS NOT NULL
             GROUP BY server, tool
            HAVING sum(calls) > 0),
          s AS (SELECT DISTINCT server FROM p WHERE ${contains(sql`coalesce(server, ${UNKNOWN})`, search)}),
          t AS (SELECT DISTINCT tool FROM p WHERE ${toolsOf} AND ${contains(sql`tool`, search)}),
          a AS (
            SELECT agent FROM (
              ${await this.agentsIn(trx, CALL_ROLLUP, ['calls', 'escalations'], window)}
              UNION
              ${await this.agentsIn(trx, REPORT_ROLLUP, ['reports'], window)}) AS agents
             WHERE ${contains(sql`agent`, search)})
          SELECT (SELECT count(*) FROM s)::text AS server_count,
                 ARRAY(SELECT server FROM s ORDER BY server COLLATE "C" NULLS FIRST LIMIT ${limit}) AS servers,
                 (SELECT count(*) FROM t)::text AS tool_count,
                 ARRAY(SELECT tool FROM t ORDER BY tool COLLATE "C" LIMIT ${limit}) AS tools,
                 (SELECT count(*) FROM a)::text AS agent_count,
                 ARRAY(SELECT agent FROM a ORDER BY agent COLLATE "C" LIMIT ${limit}) AS agents`.execute(trx);
      const row = rows[0]!;
      return {
        servers: row.servers,
        serverCount: Number(row.server_count),
        tools: row.tools,
        toolCount: Number(row.tool_count),
        agents: row.agents,
        agentCount: Number(row.agent_count),
      };
    });
  }

  /** Subagent reports are filtered by window and agent only: they belong to no server or tool. */
  async reportSums(filter: RollupFilter): Promise<ReportSums[]> {
    const rows = await this.sums(REPORT_ROLLUP, { ...filter, server: null, tool: null }, ['agent_name']);
    return rows.map(reportSumsOf);
  }

  /** The earliest `samples` offences and the latest one of each finding in the window, with the calls' texts. */
  async offenceTimelines(
    filter: RollupFilter,
    groups: readonly OffenceGroup[],
    samples: number,
  ): Promise<Map<string, OffenceTimeline>> {
    const timelines = new Map<string, OffenceTimeline>();
    if (groups.length === 0) return timelines;
    const nsRange = startedWithin(sql`c.start_ns`, filter);
    const offences = (order: RawBuilder<unknown>, limit: number) => sql`
      SELECT c.project_id, c.trace_id, c.span_id, c.start_ns, c.run_id, c.evidence, c.server_version, c.agent_name,
             c.agent_id
        FROM contribution c
       WHERE c.project_id = ${filter.projectId} AND c.kind = 'finding'
         AND coalesce(c.server, '') = coalesce(g.server, '') AND c.server IS NOT DISTINCT FROM g.server
         AND c.tool = g.tool AND c.part = g.rule AND ${nsRange} AND ${agentCondition(filter.agent, sql.raw('c.'))}
       ORDER BY ${order} LIMIT ${limit}`;
    const { rows } = await sql<{
      i: string;
      latest: boolean;
      traceId: string;
      spanId: string;
      startNs: string;
      runId: string | null;
      evidence: string | null;
      serverVersion: string | null;
      agentName: string | null;
      agentId: string | null;
      sampleText: string | null;
    }>`
      SELECT g.i::text AS i, e.latest, encode(e.trace_id, 'hex') AS "traceId", encode(e.span_id, 'hex') AS "spanId",
             e.start_ns::text AS "startNs", e.run_id AS "runId", e.evidence, e.server_version AS "serverVersion",
             e.agent_name AS "agentName", e.agent_id AS "agentId", t.sample_text AS "sampleText"
        FROM unnest(${groups.map((g) => g.server)}::text[], ${groups.map((g) => g.tool)}::text[],
                    ${groups.map((g) => g.rule)}::text[]) WITH ORDINALITY AS g (server, tool, rule, i)
       CROSS JOIN LATERAL (
               (SELECT false AS latest, o.* FROM (${offences(sql`c.start_ns, c.span_id`, samples)}) o)
               UNION ALL
               (SELECT true AS latest, o.* FROM (${offences(sql`c.start_ns DESC, c.span_id DESC`, 1)}) o)
             ) e
        LEFT JOIN tool_call t ON t.project_id = e.project_id AND t.trace_id = e.trace_id AND t.span_id = e.span_id
       ORDER BY g.i, e.latest, e.start_ns, e.span_id`.execute(this.db);

    const found = new Map<number, { earliest: FindingContribution[]; latest: FindingContribution | null }>();
    for (const row of rows) {
      const index = Number(row.i) - 1;
      const group = groups[index]!;
      const offence: FindingContribution = {
        traceId: row.traceId,
        key: row.spanId,
        startNs: BigInt(row.startNs),
        agentName: row.agentName,
        agentId: row.agentId,
        runId: row.runId ?? '',
        server: group.server,
        tool: group.tool,
        rule: group.rule,
        evidence: row.evidence ?? '',
        serverVersion: row.serverVersion,
        sampleText: row.sampleText,
        measures: {},
      };
      const entry = found.get(index) ?? { earliest: [], latest: null };
      if (row.latest) entry.latest = offence;
      else entry.earliest.push(offence);
      found.set(index, entry);
    }
    for (const [index, { earliest, latest }] of found) {
      const group = groups[index]!;
      if (latest !== null && earliest.length > 0) {
        timelines.set(offenceKey(group.server, group.tool, group.rule), { earliest, latest });
      }
    }
    return timelines;
  }

  /**
   * The window with each edge moved out to its hour boundary when no contribution of this kind started between
   * the edge and the boundary (any agent, server or tool): the sums are the same, and whole hours come from the
   * rollup. Two index probes.
   */
  private async widenToHours(db: Kysely<DB>, shape: RollupShape, filter: RollupFilter): Promise<TimeRange> {
    const gaps = hourGaps(filter.from, filter.to);
    const empty = async (gap: TimeRange | null) =>
      gap !== null &&
      (
        await sql<{ found: boolean }>`
          SELECT EXISTS (SELECT 1 FROM contribution c
                          WHERE c.project_id = ${filter.projectId} AND c.kind = ${shape.kind}
                            AND ${within(sql`c.start_time`, gap)}) AS found`.execute(db)
      ).rows[0]?.found === false;
    const before = await empty(gaps.before);
    const after = await empty(gaps.after);
    return { from: before ? gaps.before!.from : filter.from, to: after ? gaps.after!.to : filter.to };
  }

  /** A rollup's measures over the window, summed per `groupBy` dimensions. */
  private async sums(
    shape: RollupShape,
    filter: RollupFilter,
    groupBy: readonly string[],
    measures: readonly string[] = shape.measures,
  ) {
    // One snapshot for the probes and the sums: a batch committed in between cannot change what the probes saw.
    return this.inOneSnapshot((trx) => this.sumsIn(trx, { ...shape, measures }, filter, groupBy));
  }

  private async sumsIn(db: Kysely<DB>, shape: RollupShape, filter: RollupFilter, groupBy: readonly string[]) {
    const { rows } = await sql<Record<string, string | null>>`
      SELECT ${list([...groupBy, ...shape.measures.map((m) => `sum(${m})::text AS ${m}`)])}
        ${await this.windowRows(db, shape, filter, groupBy)}
       ${groupBy.length === 0 ? sql`` : sql`GROUP BY ${list(groupBy)}`}`.execute(db);
    return rows;
  }

  /**
   * `FROM … WHERE …` of the rows to sum over the window: whole days and hours from the rollup, the partial hours at
   * its edges from the contributions, the filters applied.
   */
  private async windowRows(
    db: Kysely<DB>,
    shape: RollupShape,
    filter: RollupFilter,
    groupBy: readonly string[],
  ): Promise<RawBuilder<unknown>> {
    const window = await this.widenToHours(db, shape, filter);
    const slices = windowSlices(window.from, window.to);
    const bucket = sql`bucket`;
    const fromRollup = anyOf([
      ...slices.days.map((range) => sql<boolean>`(bucket_hours = 24 AND ${within(bucket, range)})`),
      ...slices.hours.map((range) => sql<boolean>`(bucket_hours = 1 AND ${within(bucket, range)})`),
    ]);
    const dimensions = shape.dimensions.map(([column]) => column);
    const rawBranch =
      slices.raw.length === 0
        ? sql``
        : sql`UNION ALL
          SELECT ${dimensionSources(shape)}, ${measureValues(shape)}
            FROM contribution c
           WHERE c.project_id = ${filter.projectId} AND c.kind = ${shape.kind}
             AND ${anyOf(slices.raw.map((range) => within(sql`c.start_time`, range)))}`;
    return sql`FROM (SELECT ${list(dimensions)}, ${list(shape.measures)}
                FROM ${sql.table(shape.table)}
               WHERE project_id = ${filter.projectId} AND by_agent = ${byAgent(filter, groupBy)} AND ${fromRollup}
              ${rawBranch}) AS s
       WHERE ${filterConditions(filter, shape)}`;
  }

  /**
   * `SELECT agent …` of the agents (by `coalesce(agent_name, agent_id)`, what `agentCondition` selects them by) with
   * a row in the window where one of the `counted` measures is above 0: those whose sums over the window are, the
   * measures being counts (no row is below 0). Whole days and hours are read by a loose scan of `<rollup>_agent_idx`
   * (migration 0020): per agent the rollup holds at all, one probe finds it and one per range of the window finds a
   * counted row of it; the partial hours at the edges from their contributions. Summing the window's per-agent rows
   * read every agent's every server, tool, version and category: for 30 days at 1 M calls, 75,000 rows.
   */
  private async agentsIn(
    db: Kysely<DB>,
    shape: RollupShape,
    counted: readonly string[],
    filter: RollupFilter,
  ): Promise<RawBuilder<unknown>> {
    const window = await this.widenToHours(db, shape, filter);
    const slices = windowSlices(window.from, window.to);
    const agent = sql`coalesce(agent_name, agent_id)`;
    const isCounted = anyOf(counted.map((m) => sql<boolean>`${sql.ref(m)} > 0`));
    const table = sql.table(shape.table);
    const fromRollup = (hours: 1 | 24, ranges: readonly TimeRange[]) => {
      // The index's predicate, spelled out so that the planner uses it; the bucket size prunes to one partition.
      const rows = sql`${table} WHERE project_id = ${filter.projectId} AND bucket_hours = ${sql.lit(hours)}
                        AND by_agent AND ${agent} IS NOT NULL`;
      // A probe per range, each bounded on the index; a lateral subquery, where an EXISTS would be planned as a join
      // that reads every row of the window.
      const firstCounted = ranges.map(
        (range) =>
          sql`(SELECT 1 FROM ${rows} AND ${agent} = k.agent AND ${within(sql`bucket`, range)} AND ${isCounted}
                LIMIT 1)`,
      );
      return sql`SELECT agent FROM (
          WITH RECURSIVE k (agent) AS (
            SELECT min(${agent}) FROM ${rows}
            UNION ALL
            SELECT (SELECT min(${agent}) FROM ${rows} AND ${agent} > k.agent) FROM k WHERE k.agent IS NOT NULL)
          SELECT k.agent FROM k
           CROSS JOIN LATERAL (SELECT 1 FROM (${sql.join(firstCounted, sql` UNION ALL `)}) AS p LIMIT 1) AS counted
           WHERE k.agent IS NOT NULL) AS k`;
    };
    const raw = sql`SELECT agent FROM (
        SELECT coalesce(c.agent_name, c.agent_id) AS agent, ${measureValues({ ...shape, measures: counted })}
          FROM contribution c
         WHERE c.project_id = ${filter.projectId} AND c.kind = ${shape.kind}
           AND ${anyOf(slices.raw.map((range) => within(sql`c.start_time`, range)))}) AS c
       WHERE agent IS NOT NULL AND ${isCounted}`;
    const branches = [
      ...(slices.days.length > 0 ? [fromRollup(24, slices.days)] : []),
      ...(slices.hours.length > 0 ? [fromRollup(1, slices.hours)] : []),
      ...(slices.raw.length > 0 ? [raw] : []),
    ];
    return branches.length === 0
      ? sql`SELECT NULL::text AS agent WHERE FALSE`
      : sql.join(branches, sql` UNION `);
  }

  /**
   * One page of a report's groups, grouped, kept (`having`), ranked (`orderBy`) and cut (`limit`, `offset`) in SQL,
   * with how many groups there are in all and the sums over every row (the report's totals). A report over many
   * distinct names answers its top groups without reading the others out of the database. One snapshot.
   */
  private async callSumsPage(
    filter: RollupFilter,
    measures: readonly CallMeasure[],
    page: CallGroupPage,
  ): Promise<{ rows: CallSums[]; totals: CallSums; groupCount: number }> {
    const shape = { ...CALL_ROLLUP, measures };
    const groupBy = page.groupBy;
    return this.inOneSnapshot(async (trx) => {
      // One read of the window's rows gives the groups and, as the empty grouping set, the totals.
      const dimensions = list(groupBy);
      const { rows } = await sql<Record<string, string | null> & { group_count: string }>`
          WITH s AS (
            SELECT ${dimensions}, grouping(${dimensions}) AS grouping_set,
                   ${list(measures.map((m) => `sum(${m}) AS ${m}`))}
              ${await this.windowRows(trx, shape, filter, groupBy)}
             GROUP BY GROUPING SETS ((${dimensions}), ())
            HAVING grouping(${dimensions}) <> 0 OR (${page.having})),
          g AS (SELECT * FROM s WHERE grouping_set = 0),
          p AS (SELECT g.*, row_number() OVER (ORDER BY ${page.orderBy}) AS rank
                  FROM g ORDER BY rank LIMIT ${page.limit} OFFSET ${page.offset})
          SELECT (SELECT count(*) FROM g)::text AS group_count,
                 ${list(measures.map((m) => `(SELECT ${m} FROM s WHERE grouping_set <> 0)::text AS total_${m}`))},
                 ${list([...groupBy.map((d) => `p.${d}`), ...measures.map((m) => `p.${m}::text AS ${m}`)])}
            FROM (SELECT 1) AS one LEFT JOIN p ON TRUE
           ORDER BY p.rank`.execute(trx);
      // Past the last group the one row left-joined to no group only carries the count and the totals.
      const groups = rows.filter((row) => row[measures[0]!] !== null);
      const totals = Object.fromEntries(measures.map((m) => [m, rows[0]![`total_${m}`] ?? null]));
      return {
        rows: groups.map(callSumsOf),
        totals: callSumsOf(totals),
        groupCount: Number(rows[0]?.group_count ?? 0),
      };
    });
  }

  /**
   * Per bucket of `buckets` (adjacent, in order, each within one `step`): the call sums of the retry-waste groups
   * (`groupBy`) the series keeps, those over all the bucket's calls, the wasted retries and time of the groups it folds,
   * and the report sums. The whole buckets come from one read of the rollup at that step, the clipped ones at the
   * edges from windows of their own. The groups are ranked and cut in SQL, as `boundSeriesGroups` ranks and cuts them
   * (most wasted retries over the window, ties by key): grouped by tool over a week of hours, every group's sums of
   * every bucket made 200,000 rows to read out and cut. One snapshot.
   */
  async seriesSums(
    filter: RollupFilter,
    buckets: readonly SeriesBucket[],
    step: SeriesStep,
    callMeasures: readonly CallMeasure[],
    groupBy: RetryWasteGroupBy,
    groupLimit: number,
  ): Promise<{
    foldedGroups: number;
    points: { bucket: SeriesBucket; calls: CallSums[]; folded: FoldedSeriesSums; reports: ReportSums[] }[];
  }> {
    const callShape = { ...CALL_ROLLUP, measures: callMeasures };
    const reportFilter = { ...filter, server: null, tool: null };
    return this.inOneSnapshot(async (trx) => {
      const whole = buckets.filter((bucket) => bucket.whole);
      const calls = await this.seriesCallSums(trx, callShape, filter, buckets, step, groupBy, groupLimit);
      const wholeReports = await this.wholeBucketSums(trx, REPORT_ROLLUP, reportFilter, whole, step, []);
      const points = [];
      for (const bucket of buckets) {
        const key = bucket.from.toISOString();
        const reportRows = bucket.whole
          ? (wholeReports.get(key) ?? [])
          : await this.sumsIn(trx, REPORT_ROLLUP, { ...reportFilter, from: bucket.from, to: bucket.to }, []);
        points.push({
          bucket,
          ...(calls.points.get(key) ?? {
            calls: [],
            folded: { totalRows: [], wastedRetries: 0, wastedMs: 0 },
          }),
          reports: reportRows.map(reportSumsOf),
        });
      }
      return { foldedGroups: calls.foldedGroups, points };
    });
  }

  /**
   * The call side of `seriesSums`: one statement over every bucket's rows, summed per bucket and retry-waste group
   * (the dimensions the report tells groups apart by) and per bucket (the totals), the groups with retries ranked by
   * their key's wasted retries over the window, the top `groupLimit` keys kept; of the others only their count and
   * each bucket's wasted retries and time (each group's rounded as the report rounds it) are read.
   */
  private async seriesCallSums(
    db: Kysely<DB>,
    shape: RollupShape,
    filter: RollupFilter,
    buckets: readonly SeriesBucket[],
    step: SeriesStep,
    groupBy: RetryWasteGroupBy,
    groupLimit: number,
  ) {
    const points = new Map<string, { calls: CallSums[]; folded: FoldedSeriesSums }>();
    if (buckets.length === 0) return { foldedGroups: 0, points };
    const group = RETRY_WASTE_GROUPS[groupBy];
    // A call of no category is in the group "unknown", with those of category "unknown".
    const identity = list(
      groupBy === 'category' ? [`coalesce(category, 'unknown') AS category`] : group.dimensions,
    );
    const measures = list(shape.measures);
    const whole = buckets.filter((bucket) => bucket.whole);
    const branches = [
      ...(whole.length === 0
        ? []
        : [
            sql`SELECT bucket AS point, ${identity}, ${measures}
                  FROM ${sql.table(shape.table)}
                 WHERE project_id = ${filter.projectId} AND by_agent = ${byAgent(filter, group.dimensions)}
                   AND bucket_hours = ${STEP_MS[step] / 3_600_000}
                   AND bucket >= ${whole[0]!.from} AND bucket < ${whole.at(-1)!.to}
                   AND ${filterConditions(filter, shape)}`,
          ]),
      ...(await Promise.all(
        buckets
          .filter((bucket) => !bucket.whole)
          .map(
            async (bucket) =>
              sql`SELECT ${bucket.from}::timestamptz AS point, ${identity}, ${measures}
                    ${await this.windowRows(db, shape, { ...filter, from: bucket.from, to: bucket.to }, group.dimensions)}`,
          ),
      )),
    ];
    const dimensions = list(group.dimensions);
    type Row = Record<string, string | null> & {
      point: Date;
      grouping_set: number;
      folded_groups: string;
    };
    const { rows } = await sql<Row>`
      WITH s AS (${sql.join(branches, sql` UNION ALL `)}),
      g AS (
        SELECT point, ${dimensions}, ${list(shape.measures.map((m) => `sum(${m}) AS ${m}`))}
          FROM s GROUP BY point, ${dimensions}),
      -- The totals from the groups: summing the groups again costs less than summing every row twice.
      t AS (SELECT point, ${list(shape.measures.map((m) => `sum(${m}) AS ${m}`))} FROM g GROUP BY point),
      -- A bucket's groups with retries, as the series' points list them (wastedRetriesBy, wastedMsBy).
      r AS (
        SELECT point, ${group.key} AS key, wasted_retries, floor((wasted_ns + 500000) / 1000000) AS wasted_ms
          FROM g WHERE retries > 0),
      -- boundSeriesGroups' order (most wasted retries over the window, then key in code-unit order, as compareText),
      -- repeated here to cut in SQL: change both together.
      ranked AS (SELECT key, sum(wasted_retries) AS wasted_retries FROM r GROUP BY key),
      kept AS (SELECT key FROM ranked ORDER BY wasted_retries DESC, key COLLATE "C" LIMIT ${groupLimit}),
      folded AS (
        SELECT point, sum(wasted_retries) AS wasted_retries, sum(wasted_ms) AS wasted_ms
          FROM r WHERE key NOT IN (SELECT key FROM kept) GROUP BY point)
      SELECT t.point, 1 AS grouping_set, ${list(group.dimensions.map((d) => `NULL AS ${d}`))},
             ${list(shape.measures.map((m) => `t.${m}::text AS ${m}`))},
             f.wasted_retries::text AS folded_wasted_retries, f.wasted_ms::text AS folded_wasted_ms,
             ((SELECT count(*) FROM ranked) - (SELECT count(*) FROM kept))::text AS folded_groups
        FROM t LEFT JOIN folded f ON f.point = t.point
      UNION ALL
      SELECT g.point, 0, ${list(group.dimensions.map((d) => `g.${d}`))},
             ${list(shape.measures.map((m) => `g.${m}::text`))}, NULL, NULL, NULL
        FROM g WHERE g.retries > 0 AND ${group.key} IN (SELECT key FROM kept)`.execute(db);
    for (const row of rows) {
      const key = new Date(row.point).toISOString();
      const point = points.get(key) ?? {
        calls: [],
        folded: { totalRows: [], wastedRetries: 0, wastedMs: 0 },
      };
      if (row.grouping_set === 0) point.calls.push(callSumsOf(row));
      else {
        // The bucket's row over all its calls, with what its folded groups wasted.
        point.folded = {
          totalRows: [callSumsOf(row)],
          wastedRetries: Number(row['folded_wasted_retries'] ?? 0),
          wastedMs: Number(row['folded_wasted_ms'] ?? 0),
        };
      }
      points.set(key, point);
    }
    return { foldedGroups: Number(rows[0]?.folded_groups ?? 0), points };
  }

  /** Sums per whole bucket (keyed by its ISO start), read from the rollup at the bucket's size. */
  private async wholeBucketSums(
    db: Kysely<DB>,
    shape: RollupShape,
    filter: RollupFilter,
    whole: readonly SeriesBucket[],
    step: SeriesStep,
    groupBy: readonly string[],
  ): Promise<Map<string, Record<string, string | null>[]>> {
    const sums = new Map<string, Record<string, string | null>[]>();
    if (whole.length === 0) return sums;
    const { rows } = await sql<Record<string, string | null> & { bucket: Date }>`
      SELECT bucket, ${list([...groupBy, ...shape.measures.map((m) => `sum(${m})::text AS ${m}`)])}
        FROM ${sql.table(shape.table)}
       WHERE project_id = ${filter.projectId} AND by_agent = ${byAgent(filter, groupBy)}
         AND bucket_hours = ${STEP_MS[step] / 3_600_000}
         AND bucket >= ${whole[0]!.from} AND bucket < ${whole.at(-1)!.to}
         AND ${filterConditions(filter, shape)}
       GROUP BY ${list(['bucket', ...groupBy])}`.execute(db);
    for (const row of rows) {
      const key = new Date(row.bucket).toISOString();
      sums.set(key, [...(sums.get(key) ?? []), row]);
    }
    return sums;
  }
}

/** Rows summed over all agents serve unless the agent is filtered on or grouped by. */
const byAgent = (filter: RollupFilter, groupBy: readonly string[]): boolean =>
  filter.agent !== null || groupBy.some((d) => d === 'agent_name' || d === 'agent_id');

function filterConditions(filter: RollupFilter, shape: RollupShape): RawBuilder<boolean> {
  return sql.join(
    [
      agentCondition(filter.agent, sql.raw('')),
      ...(filter.server !== null ? [serverCondition(filter.server, shape)] : []),
      ...(filter.tool !== null ? [sql<boolean>`tool = ${filter.tool}`] : []),
      ...(filter.servers === undefined ? [] : [serversCondition(filter.servers)]),
      ...(filter.serverTools === undefined ? [] : [serverToolsCondition(filter.serverTools)]),
    ],
    sql` AND `,
  ) as RawBuilder<boolean>;
}

/**
 * Whether the text `name` holds `search`, letters in any case (as lower() folds them: Unicode letters too under a
 * UTF-8 locale); no search holds every name. strpos rather than LIKE: a `%` or `_` searched for is itself.
 */
function contains(name: RawBuilder<unknown>, search: string | null): RawBuilder<boolean> {
  return search === null ? TRUE : sql<boolean>`strpos(lower(${name}), lower(${search})) > 0`;
}

/**
 * `(unknown)` selects the calls whose server did not say its name, as the reports label them, and what they caused.
 * Rows without a server that are no call's are not theirs: an escalation no failure explains (no tool either), and a
 * subagent report's missing context (its "tool" is the subagent).
 */
function serverCondition(server: string, shape: RollupShape): RawBuilder<boolean> {
  if (server !== UNKNOWN_SERVER) return sql<boolean>`server = ${server}`;
  const ofACall =
    shape.kind === 'finding'
      ? sql<boolean>`rule <> ${'missing-propagation-context' satisfies FindingRule}`
      : sql<boolean>`tool IS NOT NULL`;
  return sql<boolean>`(server = ${server} OR (server IS NULL AND ${ofACall}))`;
}

function serversCondition(servers: readonly (string | null)[]): RawBuilder<boolean> {
  const named = servers.filter((server): server is string => server !== null);
  return sql<boolean>`(server = ANY(${named}::text[]) OR (${servers.includes(null)} AND server IS NULL))`;
}

function serverToolsCondition(pairs: NonNullable<RollupFilter['serverTools']>): RawBuilder<boolean> {
  // A null server (one that did not say its name) is a pair of its own, apart from a server named "".
  return sql<boolean>`(coalesce(server, ''), server IS NULL, tool) IN (
    SELECT coalesce(p_server, ''), p_server IS NULL, p_tool
      FROM unnest(${pairs.map((p) => p.server)}::text[], ${pairs.map((p) => p.tool)}::text[]) AS p (p_server, p_tool))`;
}

function agentCondition(agent: string | null, prefix: RawBuilder<unknown>): RawBuilder<boolean> {
  return agent === null
    ? TRUE
    : sql<boolean>`(${prefix}agent_name = ${agent} OR ${prefix}agent_id = ${agent})`;
}

/** A row of call sums; dimensions it was not grouped by read null. */
const callSumsOf = (row: Record<string, string | null>): CallSums => ({
  server: row['server'] ?? null,
  tool: row['tool'] ?? null,
  serverVersion: row['server_version'] ?? null,
  category: row['category'] ?? null,
  sums: measuresOf(row, CALL_ROLLUP.measures) as CallSums['sums'],
});

const reportSumsOf = (row: Record<string, string | null>): ReportSums => ({
  agentName: row['agent_name'] ?? null,
  sums: measuresOf(row, REPORT_ROLLUP.measures) as ReportSums['sums'],
});

/** Every measure of a rollup, 0 for those the query did not sum. */
function measuresOf(row: Record<string, string | null>, measures: readonly string[]): Record<string, bigint> {
  return Object.fromEntries(measures.map((m) => [m, BigInt(row[m] ?? '0')]));
}
