import type { EscalationReport } from '@errata/domain';
import type { PageProps } from '../app';
import { Chart } from '../components/chart';
import { NoData, NumberCell, PageHeader, Stat } from '../components/figures';
import { Await, SeriesTooLong } from '../components/states';
import { formatPercent, labelOf } from '../format';
import { reportParams } from '../route';
import { bucketsOf, seriesOf } from '../series';
import { all, useApi, useSeries } from '../use-api';
import { ScrollBox } from '../components/scroll-box';

type Escalations = Omit<EscalationReport, 'attributions'>;

export function EscalationsPage({ filters }: PageProps) {
  const params = reportParams(filters);
  const report = useApi<Escalations>('/api/v1/reports/escalations', params);
  const series = useSeries(filters, params);
  const loaded = all({ report, series });
  return (
    <section aria-labelledby="page-title">
      <PageHeader title="Escalations">
        Hand-offs to a human, the user or a coordinator, attributed to the most recent failed call of the same
        run within the retry window. An escalation is avoidable when it follows a business failure that
        carried a customer-facing explanation, a transient failure that was never retried, or a validation
        failure that was never retried with changed arguments.
      </PageHeader>
      <SeriesTooLong shown={series.tooLong} />
      <Await loaded={loaded} what="escalations" retry={() => (report.retry(), series.retry())}>
        {({ report, series }) => {
          const { totals } = report;
          if (totals.failures === 0 && totals.escalations === 0)
            return <NoData what="failures or escalations" filters={filters} />;
          const categories = report.byCategory.filter((row) => row.failures > 0 || row.escalations > 0);
          const targets = Object.entries(report.byTarget);
          return (
            <>
              <div class="stats stats-compact">
                <Stat id="failures" label="Failed calls" value={totals.failures} />
                <Stat id="escalations" label="Escalations" value={totals.escalations} />
                <Stat
                  id="rate"
                  label="Escalation rate"
                  value={totals.rate}
                  format={formatPercent}
                  detail="escalations per failed call"
                />
                <Stat id="attributed" label="Attributed" value={totals.attributed} />
                <Stat id="avoidable" label="Avoidable" value={totals.avoidable} />
              </div>
              <div class="charts-row">
                <Chart
                  title="Escalations over time"
                  testId="escalations"
                  kind="line"
                  time
                  x={bucketsOf(series)}
                  series={[
                    seriesOf(series, 'escalations', (p) => p.escalations),
                    seriesOf(series, 'avoidable', (p) => p.avoidableEscalations),
                  ]}
                />
                <Chart
                  title="Escalations by target"
                  testId="targets"
                  kind="bar"
                  x={targets.map(([target]) => target)}
                  series={[{ name: 'escalations', values: targets.map(([, n]) => n) }]}
                />
              </div>
              <h2 id="by-category">By failure category</h2>
              <ScrollBox label="Escalations by failure category">
                <table aria-labelledby="by-category" data-table="escalations-by-category">
                  <thead>
                    <tr>
                      <th scope="col">Category</th>
                      <th scope="col" class="num">
                        Failures
                      </th>
                      <th scope="col" class="num">
                        Escalations
                      </th>
                      <th scope="col" class="num">
                        Avoidable
                      </th>
                      <th scope="col" class="num">
                        Rate
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {categories.map((row) => (
                      <tr key={row.category} data-key={row.category}>
                        <th scope="row">{labelOf(row.category)}</th>
                        <NumberCell value={row.failures} />
                        <NumberCell value={row.escalations} />
                        <NumberCell value={row.avoidable} />
                        <NumberCell value={row.rate} format={formatPercent} />
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollBox>
            </>
          );
        }}
      </Await>
    </section>
  );
}
