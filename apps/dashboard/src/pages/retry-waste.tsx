import type { RetryWasteReport } from '@errata/domain';
import type { PageProps } from '../app';
import { Chart } from '../components/chart';
import { CountList, NoData, NumberCell, PageHeader, Stat } from '../components/figures';
import { Await, UrlNotice, SeriesTooLong } from '../components/states';
import { formatCount, formatDateTime, formatDuration, labelOf } from '../format';
import { TimelineLink } from '../components/timeline-link';
import { navigate, reportParams, withQuery } from '../route';
import { bucketsOf, STACKED_GROUPS, stackedSeries } from '../series';
import { all, useApi, useSeries } from '../use-api';
import { ScrollBox } from '../components/scroll-box';
import { Name } from '../components/name';
import { offsetOf, PAGE_SIZE, Pager, PastEnd } from '../components/pager';

const GROUPINGS = ['category', 'server', 'tool'] as const;
type Grouping = (typeof GROUPINGS)[number];
const GROUPING_TITLES: Record<Grouping, string> = {
  category: 'category of the retried call',
  server: 'server of the retried call',
  tool: 'tool of the retried call',
};

/**
 * A group's name: its category's label, or its server (and tool) as the key says them (`(unknown)` for a server
 * without a name), each name isolated so one cannot reorder the other.
 */
function GroupName({
  groupBy,
  group,
}: {
  groupBy: (typeof GROUPINGS)[number];
  group: RetryWasteReport['groups'][number];
}) {
  if (groupBy === 'category') return <>{labelOf(group.key)}</>;
  if (groupBy === 'server' || group.tool === null || group.tool === undefined)
    return <Name>{group.key}</Name>;
  const server = group.key.slice(0, group.key.length - group.tool.length - 1);
  return (
    <>
      <Name>{server}</Name>/<Name>{group.tool}</Name>
    </>
  );
}

/** The API answers a page of the groups (top first): `groupCount` says how many there are in all. */
type RetryWastePage = RetryWasteReport & { readonly groupCount: number; readonly offset: number };

export function RetryWastePage({ filters, query }: PageProps) {
  const rawGroupBy = query.get('groupBy');
  const groupBy: Grouping = (GROUPINGS as readonly string[]).includes(rawGroupBy ?? '')
    ? (rawGroupBy as Grouping)
    : 'category';
  const notices =
    rawGroupBy !== null && rawGroupBy !== groupBy
      ? [
          `"groupBy" must be one of ${GROUPINGS.join(', ')}, not "${rawGroupBy}". Grouped by category instead.`,
        ]
      : [];
  const params = reportParams(filters);
  const offset = offsetOf(query);
  const report = useApi<RetryWastePage>('/api/v1/reports/retry-waste', {
    ...params,
    groupBy,
    limit: String(PAGE_SIZE),
    offset: String(offset),
  });
  // The chart draws 8 groups and "other": one more kept lets a ninth show as itself when there are no others.
  const series = useSeries(filters, {
    ...params,
    groupBy,
    groupLimit: String(STACKED_GROUPS + 1),
  });
  const loaded = all({ report, series });
  return (
    <section aria-labelledby="page-title">
      <PageHeader title="Retry waste">
        Retries that could not have succeeded: repeated permission and validation errors, retries that ignored
        a declared retry-after, and empty results retried as if they were failures.
      </PageHeader>
      <SeriesTooLong shown={series.tooLong} />
      <UrlNotice notices={notices} />
      <Await loaded={loaded} what="retry waste" retry={() => (report.retry(), series.retry())}>
        {({ report, series }) => {
          if (report.totals.calls === 0) return <NoData what="tool calls" filters={filters} />;
          const reasons = new Map<string, number>();
          for (const group of report.groups) {
            for (const [reason, n] of Object.entries(group.reasons))
              reasons.set(reason, (reasons.get(reason) ?? 0) + n);
          }
          const reasonNames = [...reasons].filter(([, n]) => n > 0).map(([reason]) => reason);
          const everyGroup = report.groups.length === report.groupCount;
          return (
            <>
              <div class="stats stats-compact">
                <Stat id="calls" label="Tool calls" value={report.totals.calls} />
                <Stat id="retries" label="Retries" value={report.totals.retries} />
                <Stat id="wasted-retries" label="Wasted retries" value={report.totals.wastedRetries} />
                <Stat
                  id="wasted-ms"
                  label="Time wasted"
                  value={report.totals.wastedMs}
                  format={formatDuration}
                />
                <Stat
                  id="unrecovered-chains"
                  label="Unrecovered chains"
                  value={report.totals.unrecoveredChains}
                />
              </div>
              <div class="charts-row">
                <Chart
                  title={`Wasted retries by ${GROUPING_TITLES[groupBy]}`}
                  testId="wasted-by-group"
                  kind="stacked-bar"
                  time
                  x={bucketsOf(series)}
                  series={stackedSeries(series, (p) => p.wastedRetriesBy, {
                    values: (p) => p.foldedWastedRetries,
                    groups: series.foldedGroups,
                  })}
                />
                <Chart
                  title={
                    everyGroup
                      ? 'Retries by reason'
                      : `Retries by reason, in the ${formatCount(report.groups.length)} groups below`
                  }
                  testId="reasons"
                  kind="bar"
                  x={reasonNames.map(labelOf)}
                  series={[
                    { name: 'retries', values: reasonNames.map((reason) => reasons.get(reason) ?? 0) },
                  ]}
                />
              </div>
              <div class="table-head">
                <h2 id="groups-title">By {groupBy}</h2>
                <div class="segmented" role="group" aria-label="Group retries by">
                  {GROUPINGS.map((grouping) => (
                    <button
                      type="button"
                      key={grouping}
                      aria-pressed={grouping === groupBy}
                      onClick={() =>
                        navigate(
                          location.pathname +
                            withQuery(query, {
                              groupBy: grouping === 'category' ? null : grouping,
                              offset: null,
                            }),
                        )
                      }
                    >
                      {grouping}
                    </button>
                  ))}
                </div>
              </div>
              {report.groupCount === 0 ? (
                <p class="muted">No retries in this window.</p>
              ) : report.groups.length === 0 ? (
                <PastEnd what={['group', 'groups']} query={query} offset={offset} total={report.groupCount} />
              ) : (
                <>
                  <ScrollBox label={`Retries by ${groupBy}`}>
                    <table aria-labelledby="groups-title" data-table="retry-groups">
                      <thead>
                        <tr>
                          <th scope="col">{groupBy}</th>
                          <th scope="col" class="num">
                            Retries
                          </th>
                          <th scope="col" class="num">
                            Wasted
                          </th>
                          <th scope="col" class="num">
                            Time wasted
                          </th>
                          <th scope="col" class="num">
                            Unrecovered chains
                          </th>
                          <th scope="col">Reasons</th>
                          <th scope="col">Latest wasted retries</th>
                        </tr>
                      </thead>
                      <tbody>
                        {report.groups.map((group) => (
                          <tr
                            key={JSON.stringify([group.key, group.server, group.tool])}
                            data-key={group.key}
                          >
                            <th scope="row">
                              <GroupName groupBy={groupBy} group={group} />
                            </th>
                            <NumberCell value={group.retries} />
                            <NumberCell value={group.wastedRetries} />
                            <NumberCell value={group.wastedMs} format={formatDuration} />
                            <NumberCell value={group.unrecoveredChains} />
                            <td>
                              <CountList counts={group.reasons} />
                            </td>
                            {/* It names each retry's agent: a name cell, which wraps a long one. */}
                            <td class="name">
                              <ul class="samples">
                                {group.samples.map((sample) => (
                                  <li key={sample.spanId}>
                                    <span class="tag">{labelOf(sample.reason)}</span>{' '}
                                    <time dateTime={sample.startTime}>
                                      {formatDateTime(sample.startTime)}
                                    </time>
                                    {sample.agentName !== null && (
                                      <Name class="muted">{sample.agentName}</Name>
                                    )}
                                    <TimelineLink sample={sample} query={query} />
                                  </li>
                                ))}
                              </ul>
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </ScrollBox>
                  {!everyGroup && (
                    <Pager
                      label={`Pages of retries by ${groupBy}`}
                      query={query}
                      offset={report.offset}
                      shown={report.groups.length}
                      total={report.groupCount}
                    />
                  )}
                </>
              )}
            </>
          );
        }}
      </Await>
    </section>
  );
}
