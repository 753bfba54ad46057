import type { MisclassifiedReport } from '@errata/domain';
import type { PageProps } from '../app';
import { NoData, NumberCell, PageHeader, Stat } from '../components/figures';
import { TimelineLink } from '../components/timeline-link';
import { Await } from '../components/states';
import { formatDateTime, labelOf } from '../format';
import { reportParams } from '../route';
import { useApi } from '../use-api';
import { ScrollBox } from '../components/scroll-box';
import { ServerTool } from '../components/name';
import { offsetOf, PAGE_SIZE, Pager, PastEnd } from '../components/pager';

/** The API answers a page of the groups (most offences first): `groupCount` says how many there are in all. */
type MisclassifiedPage = MisclassifiedReport & { readonly groupCount: number; readonly offset: number };

export function MisclassifiedPage({ filters, query }: PageProps) {
  const offset = offsetOf(query);
  const report = useApi<MisclassifiedPage>('/api/v1/reports/misclassified-results', {
    ...reportParams(filters),
    limit: String(PAGE_SIZE),
    offset: String(offset),
  });
  return (
    <section aria-labelledby="page-title">
      <PageHeader title="Misclassified results">
        Valid empty results reported as errors (the agent retries or escalates for nothing), and failures
        dressed up as empty successes (the agent believes there is nothing to find).
      </PageHeader>
      <Await loaded={report} what="misclassified results" retry={report.retry}>
        {(report) => {
          if (report.totals.calls === 0) return <NoData what="tool calls" filters={filters} />;
          return (
            <>
              <div class="stats stats-compact">
                <Stat id="calls" label="Tool calls" value={report.totals.calls} />
                <Stat id="empty-as-error" label="Empty as error" value={report.totals.emptyAsError} />
                <Stat id="failure-as-empty" label="Failure as empty" value={report.totals.failureAsEmpty} />
              </div>
              {report.groupCount === 0 ? (
                <p class="muted" data-empty>
                  No misclassified results in this window.
                </p>
              ) : report.groups.length === 0 ? (
                <PastEnd
                  what={['tool with misclassified results', 'tools with misclassified results']}
                  query={query}
                  offset={offset}
                  total={report.groupCount}
                />
              ) : (
                <ScrollBox label="Misclassified results by server and tool">
                  <table aria-label="Misclassified results by server and tool" data-table="misclassified">
                    <thead>
                      <tr>
                        <th scope="col">Server / tool</th>
                        <th scope="col" class="num">
                          Calls
                        </th>
                        <th scope="col" class="num">
                          Empty as error
                        </th>
                        <th scope="col" class="num">
                          Failure as empty
                        </th>
                        <th scope="col">Samples (redacted)</th>
                      </tr>
                    </thead>
                    <tbody>
                      {report.groups.map((group) => (
                        <tr
                          key={`${group.server}/${group.tool}`}
                          data-key={`${group.server ?? ''}/${group.tool}`}
                        >
                          <th scope="row">
                            <ServerTool server={group.server} tool={group.tool} />
                          </th>
                          <NumberCell value={group.calls} />
                          <NumberCell value={group.emptyAsError} />
                          <NumberCell value={group.failureAsEmpty} />
                          <td>
                            <ul class="samples">
                              {group.samples.map((sample) => (
                                <li key={sample.spanId}>
                                  <span class={`tag tag-${sample.direction}`}>
                                    {labelOf(sample.direction)}
                                  </span>{' '}
                                  <time dateTime={sample.startTime}>{formatDateTime(sample.startTime)}</time>
                                  {sample.text !== null && <q class="sample-text">{sample.text}</q>}
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
              )}
              {report.groups.length > 0 && report.groups.length < report.groupCount && (
                <Pager
                  label="Pages of misclassified results"
                  query={query}
                  offset={report.offset}
                  shown={report.groups.length}
                  total={report.groupCount}
                />
              )}
            </>
          );
        }}
      </Await>
    </section>
  );
}
