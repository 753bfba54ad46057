import type { EscalationReport, RetryWasteReport, SubagentCoverageReport } from '@errata/domain';
import type { PageProps } from '../app';
import { Chart } from '../components/chart';
import { NoData, PageHeader, Stat } from '../components/figures';
import { Await, SeriesTooLong } from '../components/states';
import { formatCount, formatDuration, formatPercent } from '../format';
import { reportParams } from '../route';
import { bucketsOf, seriesOf } from '../series';
import { all, useApi, useSeries } from '../use-api';

type Escalations = Omit<EscalationReport, 'attributions'>;

export function OverviewPage({ filters }: PageProps) {
  const params = reportParams(filters);
  const retryWaste = useApi<RetryWasteReport>('/api/v1/reports/retry-waste', params);
  const escalations = useApi<Escalations>('/api/v1/reports/escalations', params);
  const coverage = useApi<SubagentCoverageReport>('/api/v1/reports/subagent-coverage', params);
  const series = useSeries(filters, params);
  const loaded = all({ retryWaste, escalations, coverage, series });
  const retry = () => [retryWaste, escalations, coverage, series].forEach((part) => part.retry());
  return (
    <section aria-labelledby="page-title">
      <PageHeader title="Overview">
        What your agents' MCP tool calls cost in failures, wasted retries and hand-offs over the selected
        window.
      </PageHeader>
      <SeriesTooLong shown={series.tooLong} />
      <Await loaded={loaded} what="the overview" retry={retry}>
        {({ retryWaste, escalations, coverage, series }) => {
          if (
            retryWaste.totals.calls === 0 &&
            coverage.reports === 0 &&
            escalations.totals.escalations === 0
          ) {
            return <NoData what="tool calls" filters={filters} />;
          }
          const x = bucketsOf(series);
          const failureRate =
            retryWaste.totals.calls === 0 ? null : escalations.totals.failures / retryWaste.totals.calls;
          return (
            <div class="stats">
              <Stat id="calls" label="Tool calls" value={retryWaste.totals.calls}>
                <Chart
                  title="Tool calls per bucket"
                  testId="calls"
                  kind="bar"
                  time
                  x={x}
                  series={[seriesOf(series, 'calls', (p) => p.calls)]}
                  height={120}
                />
              </Stat>
              <Stat
                id="failure-rate"
                label="Failure rate"
                value={failureRate}
                format={formatPercent}
                detail={`${formatCount(escalations.totals.failures)} failed calls`}
              >
                <Chart
                  title="Failure rate per bucket"
                  testId="failure-rate"
                  kind="line"
                  time
                  percent
                  x={x}
                  series={[seriesOf(series, 'failure rate', (p) => p.failureRate)]}
                  height={120}
                />
              </Stat>
              <Stat
                id="wasted-retries"
                label="Wasted retries"
                value={retryWaste.totals.wastedRetries}
                detail={
                  <>
                    of {formatCount(retryWaste.totals.retries)} retries ·{' '}
                    <span data-stat-part="wasted-ms" data-value={retryWaste.totals.wastedMs}>
                      {formatDuration(retryWaste.totals.wastedMs)}
                    </span>{' '}
                    wasted
                  </>
                }
              >
                <Chart
                  title="Wasted retries per bucket"
                  testId="wasted-retries"
                  kind="bar"
                  time
                  x={x}
                  series={[seriesOf(series, 'wasted retries', (p) => p.wastedRetries)]}
                  height={120}
                />
              </Stat>
              <Stat
                id="wasted-ms"
                label="Time spent on wasted retries"
                value={retryWaste.totals.wastedMs}
                format={formatDuration}
              >
                <Chart
                  title="Time spent on wasted retries per bucket"
                  testId="wasted-ms"
                  kind="bar"
                  time
                  duration
                  x={x}
                  series={[seriesOf(series, 'wasted ms', (p) => p.wastedMs)]}
                  height={120}
                />
              </Stat>
              <Stat
                id="avoidable-escalations"
                label="Avoidable escalations"
                value={escalations.totals.avoidable}
                detail={`of ${formatCount(escalations.totals.escalations)} escalations`}
              >
                <Chart
                  title="Escalations and avoidable escalations per bucket"
                  testId="avoidable-escalations"
                  kind="line"
                  time
                  x={x}
                  series={[
                    seriesOf(series, 'escalations', (p) => p.escalations),
                    seriesOf(series, 'avoidable', (p) => p.avoidableEscalations),
                  ]}
                  height={120}
                />
              </Stat>
              <Stat
                id="subagent-coverage"
                label="Subagent coverage"
                value={coverage.meanCoverage}
                format={formatPercent}
                detail={`mean over ${formatCount(coverage.reports)} subagent reports`}
              >
                <Chart
                  title="Mean subagent coverage per bucket"
                  testId="subagent-coverage"
                  kind="line"
                  time
                  percent
                  x={x}
                  series={[seriesOf(series, 'mean coverage', (p) => p.meanCoverage)]}
                  height={120}
                />
              </Stat>
            </div>
          );
        }}
      </Await>
    </section>
  );
}
