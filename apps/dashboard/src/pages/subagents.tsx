import type { SubagentCoverageReport } from '@errata/domain';
import { COVERAGE_BUCKETS } from '@errata/domain/subagent-report-elements';
import type { PageProps } from '../app';
import { Chart } from '../components/chart';
import { NoData, PageHeader, Stat } from '../components/figures';
import { Await, SeriesTooLong } from '../components/states';
import { formatCount, formatPercent, labelOf } from '../format';
import { reportParams } from '../route';
import { bucketsOf, seriesOf } from '../series';
import { all, useApi, useSeries } from '../use-api';

export function SubagentsPage({ filters }: PageProps) {
  const params = reportParams(filters);
  const report = useApi<SubagentCoverageReport>('/api/v1/reports/subagent-coverage', params);
  const series = useSeries(filters, params);
  const loaded = all({ report, series });
  return (
    <section aria-labelledby="page-title">
      <PageHeader title="Subagent coverage">
        How much of their task subagents report back, and whether partial and failed reports carry what the
        coordinator needs: the category, what was attempted, the partial results and the alternatives.
      </PageHeader>
      <SeriesTooLong shown={series.tooLong} />
      <Await loaded={loaded} what="subagent coverage" retry={() => (report.retry(), series.retry())}>
        {({ report, series }) => {
          if (report.reports === 0) return <NoData what="subagent reports" filters={filters} />;
          // In coverage order: JSON puts the integer-like key "100" first.
          const buckets = COVERAGE_BUCKETS.map(
            (bucket) => [bucket, report.coverageDistribution[bucket]] as const,
          );
          const missing = Object.entries(report.missingElements);
          return (
            <>
              <div class="stats stats-compact">
                <Stat
                  id="reports"
                  label="Reports"
                  value={report.reports}
                  detail={`${formatCount(report.complete)} complete · ${formatCount(report.partial)} partial · ${formatCount(report.failed)} failed`}
                />
                <Stat
                  id="mean-coverage"
                  label="Mean coverage"
                  value={report.meanCoverage}
                  format={formatPercent}
                />
                <Stat
                  id="propagation-completeness"
                  label="Propagation completeness"
                  value={report.propagationCompleteness}
                  format={formatPercent}
                  detail="partial and failed reports carrying all four elements"
                />
                <Stat
                  id="local-absorption"
                  label="Local absorption"
                  value={report.localAbsorptionRate}
                  format={formatPercent}
                  detail={`${formatCount(report.absorbedTransientFailures)} of ${formatCount(report.transientFailuresInSubagents)} transient failures handled inside subagents`}
                />
                <Stat
                  id="silent-partials"
                  label="Silent partials"
                  value={report.silentPartials}
                  detail="reports or results that claimed success over an unrecovered failure"
                />
              </div>
              <div class="charts-row">
                <Chart
                  title="Coverage distribution (reports by share of the task covered)"
                  testId="coverage-distribution"
                  kind="bar"
                  x={buckets.map(([bucket]) => `${bucket}%`)}
                  series={[{ name: 'reports', values: buckets.map(([, n]) => n) }]}
                />
                <Chart
                  title="Partial and failed reports missing each element"
                  testId="missing-elements"
                  kind="bar"
                  x={missing.map(([element]) => labelOf(element))}
                  series={[{ name: 'reports missing it', values: missing.map(([, n]) => n) }]}
                />
              </div>
              <Chart
                title="Mean coverage over time"
                testId="coverage-over-time"
                kind="line"
                time
                percent
                x={bucketsOf(series)}
                series={[seriesOf(series, 'mean coverage', (p) => p.meanCoverage)]}
              />
            </>
          );
        }}
      </Await>
    </section>
  );
}
