import type { ServerScorecard } from '@errata/domain';
import { UNKNOWN_SERVER } from '@errata/domain/server-label';
import type { PageProps } from '../app';
import { CountList, NoData, NumberCell, PageHeader } from '../components/figures';
import { Link } from '../components/link';
import { Await } from '../components/states';
import { filterQuery, reportParams, withQuery } from '../route';
import { useApi } from '../use-api';
import { ScrollBox } from '../components/scroll-box';
import { Name } from '../components/name';
import { Fragment } from 'preact';
import { offsetOf, PAGE_SIZE, Pager, PastEnd } from '../components/pager';
import { formatCount } from '../format';

/** The letter is the grade (its column says so): the colour only repeats it. */
const Grade = ({ grade }: { grade: string }) => (
  <span class={`grade grade-${grade}`} data-grade={grade}>
    {grade}
  </span>
);

/**
 * The API answers a page of the servers (by name): `groupCount` says how many there are in all; and a page of each
 * one's tools (`toolOffset`), `toolCount` saying how many it has.
 */
type ScorecardPage = ServerScorecard & {
  readonly groupCount: number;
  readonly offset: number;
  readonly toolOffset: number;
};

/**
 * Tools shown per server when every server is listed: 50 servers of 50 tools made a table of 2,550 rows. A server's
 * own page (the `server` filter) pages through all of its tools instead, PAGE_SIZE at a time.
 */
export const TOOLS_PER_SERVER = 10;

export function ServersPage({ filters, query }: PageProps) {
  // With a server chosen, the page's `offset` pages its tools; without, the servers.
  const oneServer = filters.server !== null;
  const scorecard = useApi<ScorecardPage>('/api/v1/servers', {
    ...reportParams(filters),
    limit: String(PAGE_SIZE),
    offset: oneServer ? '0' : String(offsetOf(query)),
    toolLimit: String(oneServer ? PAGE_SIZE : TOOLS_PER_SERVER),
    toolOffset: oneServer ? String(offsetOf(query)) : '0',
  });
  return (
    <section aria-labelledby="page-title">
      <PageHeader title="Servers">
        A grade per MCP server and tool from the share of its calls that broke an error-contract rule: A none,
        B under 1%, C under 5%, D under 20%, F beyond.
      </PageHeader>
      <Await loaded={scorecard} what="the scorecard" retry={scorecard.retry}>
        {({ servers, groupCount, offset, toolOffset }) => {
          if (groupCount === 0) return <NoData what="MCP servers" filters={filters} />;
          if (servers.length === 0)
            return <PastEnd what={['server', 'servers']} query={query} offset={offset} total={groupCount} />;
          // The chosen server's tools (two servers for `(unknown)`: the unnamed and one so named), paged.
          const toolCount = Math.max(...servers.map((server) => server.toolCount));
          const toolsShown = Math.max(...servers.map((server) => server.tools.length));
          if (oneServer && toolsShown === 0 && toolCount > 0)
            return <PastEnd what={['tool', 'tools']} query={query} offset={toolOffset} total={toolCount} />;
          return (
            <>
              <ScrollBox label="Scorecard per server and tool">
                <table aria-label="Scorecard per server and tool" data-table="scorecard">
                  <thead>
                    <tr>
                      <th scope="col">Server / tool</th>
                      <th scope="col">Grade</th>
                      <th scope="col" class="num">
                        Calls
                      </th>
                      <th scope="col" class="num">
                        Failures
                      </th>
                      <th scope="col" class="num">
                        Violating calls
                      </th>
                      <th scope="col">Rules broken</th>
                    </tr>
                  </thead>
                  {servers.map((server) => {
                    const name = server.server ?? 'unknown server';
                    return (
                      <tbody key={name} data-server={server.server ?? ''}>
                        <tr class="server-row" data-key={server.server ?? ''}>
                          <th scope="row">
                            <Link
                              href={`/findings${withQuery(new URLSearchParams(filterQuery(query)), { server: server.server ?? UNKNOWN_SERVER, tool: null })}`}
                            >
                              <Name>{name}</Name>
                            </Link>
                            {server.versions.length > 0 && (
                              <span class="muted">
                                {' '}
                                {server.versions.map((version, i) => (
                                  <Fragment key={version}>
                                    {i > 0 && ', '}
                                    <Name>{version}</Name>
                                  </Fragment>
                                ))}
                              </span>
                            )}
                          </th>
                          <td>
                            <Grade grade={server.grade} />
                          </td>
                          <NumberCell value={server.calls} />
                          <NumberCell value={server.failures} />
                          <NumberCell value={server.violatingCalls} />
                          <td />
                        </tr>
                        {server.tools.map((tool) => (
                          <tr
                            key={tool.tool}
                            class="tool-row"
                            data-key={`${server.server ?? ''}/${tool.tool}`}
                          >
                            <th scope="row" class="indent">
                              <Name>{tool.tool}</Name>
                            </th>
                            <td>
                              <Grade grade={tool.grade} />
                            </td>
                            <NumberCell value={tool.calls} />
                            <NumberCell value={tool.failures} />
                            <NumberCell value={tool.violatingCalls} />
                            <td>
                              <CountList counts={tool.rules} />
                            </td>
                          </tr>
                        ))}
                        {!oneServer && server.toolCount > server.tools.length && (
                          <tr class="more-tools" data-more-tools={server.toolCount - server.tools.length}>
                            <td colSpan={6} class="indent muted">
                              {formatCount(server.toolCount - server.tools.length)} more of its{' '}
                              {formatCount(server.toolCount)} tools not shown: these are the{' '}
                              {formatCount(server.tools.length)} with the most violating calls, then the most
                              calls. The server's figures count them all.{' '}
                              <Link
                                href={`/servers${withQuery(new URLSearchParams(filterQuery(query)), { server: server.server ?? UNKNOWN_SERVER, tool: null })}`}
                              >
                                All {formatCount(server.toolCount)} tools of <Name>{name}</Name>
                              </Link>
                            </td>
                          </tr>
                        )}
                      </tbody>
                    );
                  })}
                </table>
              </ScrollBox>
              {!oneServer && servers.length < groupCount && (
                <Pager
                  label="Pages of servers"
                  query={query}
                  offset={offset}
                  shown={servers.length}
                  total={groupCount}
                />
              )}
              {oneServer && toolsShown < toolCount && (
                <Pager
                  label="Pages of the server's tools"
                  query={query}
                  offset={toolOffset}
                  shown={toolsShown}
                  total={toolCount}
                />
              )}
            </>
          );
        }}
      </Await>
    </section>
  );
}
