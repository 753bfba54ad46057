import type { Finding } from '@errata/domain';
import { FINDING_RULES } from '@errata/domain/rules';
import type { PageProps } from '../app';
import { NoData, NumberCell, PageHeader } from '../components/figures';
import { Link } from '../components/link';
import { Await, UrlNotice } from '../components/states';
import { formatDateTime, formatPercent, labelOf } from '../format';
import { filterQuery, navigate, reportParams, withQuery } from '../route';
import { useApi } from '../use-api';
import { ScrollBox } from '../components/scroll-box';
import { ServerTool } from '../components/name';
import { offsetOf, PAGE_SIZE, Pager, PastEnd } from '../components/pager';

interface FindingsList {
  readonly total: number;
  readonly limit: number;
  readonly offset: number;
  readonly findings: readonly Omit<Finding, 'samples'>[];
}

export function FindingsPage({ filters, query }: PageProps) {
  const rawRule = query.get('rule');
  const rule = (FINDING_RULES as readonly string[]).includes(rawRule ?? '') ? rawRule : null;
  const notices =
    rawRule !== null && rawRule !== '' && rule === null
      ? [`"rule" must be one of the rules below, not "${rawRule}". Showing all rules instead.`]
      : [];
  const offset = offsetOf(query);
  const list = useApi<FindingsList>('/api/v1/findings', {
    ...reportParams(filters),
    rule,
    limit: String(PAGE_SIZE),
    offset: String(offset),
  });
  const go = (changes: Record<string, string | null>) =>
    navigate(location.pathname + withQuery(query, changes));
  return (
    <section aria-labelledby="page-title">
      <PageHeader title="Findings">
        Error-contract problems per server, tool and rule, with what they cost. Open one for the evidence, the
        result the tool should return instead, and where its fix stands.
      </PageHeader>
      <UrlNotice notices={notices} />
      <div class="table-head">
        <div class="field">
          <label for="filter-rule">Rule</label>
          <select
            id="filter-rule"
            name="rule"
            value={rule ?? ''}
            onChange={(e) => go({ rule: e.currentTarget.value || null, offset: null })}
          >
            <option value="">All rules</option>
            {FINDING_RULES.map((name) => (
              <option key={name} value={name}>
                {labelOf(name)}
              </option>
            ))}
          </select>
        </div>
      </div>
      <Await loaded={list} what="findings" retry={list.retry}>
        {(list) => {
          if (list.total === 0) {
            return rule === null ? (
              <NoData what="findings" filters={filters} />
            ) : (
              <p class="muted" data-empty>
                No findings for this rule in this window.
              </p>
            );
          }
          // The finding's page links back to this page of this rule.
          const carried = filterQuery(query, ['rule', 'offset']);
          if (list.findings.length === 0) {
            return (
              <PastEnd what={['finding', 'findings']} query={query} offset={offset} total={list.total} />
            );
          }
          return (
            <>
              <ScrollBox label="Table of findings">
                <table aria-label="Findings" data-table="findings">
                  <thead>
                    <tr>
                      <th scope="col">Rule</th>
                      <th scope="col">Server / tool</th>
                      <th scope="col" class="num">
                        Offences
                      </th>
                      <th scope="col" class="num">
                        Rate
                      </th>
                      <th scope="col" class="num">
                        Wasted retries
                      </th>
                      <th scope="col" class="num">
                        Escalations caused
                      </th>
                      <th scope="col">Last seen</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.findings.map((finding) => (
                      <tr key={finding.id} data-key={finding.id}>
                        <th scope="row">
                          <Link href={`/findings/${finding.id}${carried}`}>{labelOf(finding.rule)}</Link>
                        </th>
                        <td class="name">
                          <ServerTool server={finding.server} tool={finding.tool} />
                        </td>
                        <NumberCell value={finding.count} />
                        <NumberCell value={finding.rate} format={formatPercent} />
                        <NumberCell value={finding.wastedRetries} />
                        <NumberCell value={finding.escalationsCaused} />
                        <td>
                          <time dateTime={finding.lastSeen}>{formatDateTime(finding.lastSeen)}</time>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollBox>
              <Pager
                label="Pages of findings"
                query={query}
                offset={list.offset}
                shown={list.findings.length}
                total={list.total}
              />
            </>
          );
        }}
      </Await>
    </section>
  );
}
