/**
 * The sources of the research scenario. `search_knowledge_base` and `search_web` follow the contract (a valid
 * empty list; rate limits as transient errors with `retryAfterMs`). `search_news` is the seeds' hidden failure:
 * its feed is down, and it answers `isError: false` with "No results found." — false confidence for whoever
 * reads it.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AttemptCounter } from './attempt-counter';
import { ARTICLES, WEB_SEARCH_RETRY_AFTER_MS } from './catalog.data';
import { contractError, structuredResult } from './tool-results';

const WEB_RESULTS_PER_QUERY = 3;

const words = (query: string): string[] => query.toLowerCase().split(/\W+/).filter(Boolean);

function searchKnowledgeBase(query: string): CallToolResult {
  const terms = new Set(words(query));
  const articles = ARTICLES.filter((article) => article.keywords.some((keyword) => terms.has(keyword))).map(
    ({ id, title }) => ({ id, title }),
  );
  return structuredResult({ articles, resultCount: articles.length });
}

const rateLimited = (): CallToolResult =>
  contractError({
    errorCategory: 'transient',
    isRetryable: true,
    code: 'RATE_LIMITED',
    description: `The search provider rate-limited this query. The request is valid and may succeed if retried after ${WEB_SEARCH_RETRY_AFTER_MS} ms.`,
    retryAfterMs: WEB_SEARCH_RETRY_AFTER_MS,
  });

/**
 * The provider's quota for competitor monitoring is exhausted, so those queries are always rate-limited;
 * queries for the latest data are throttled every other time (odd attempts), so they succeed on a retry.
 */
function searchWeb(query: string, attempts: AttemptCounter): CallToolResult {
  const terms = words(query);
  if (terms.includes('competitor')) return rateLimited();
  if (terms.includes('latest') && attempts.next(`search_web ${query}`) % 2 === 1) return rateLimited();
  const slug = terms.join('-');
  const results = Array.from({ length: WEB_RESULTS_PER_QUERY }, (_, i) => ({
    title: `${query} (source ${i + 1})`,
    url: `https://example.org/${slug}/${i + 1}`,
  }));
  return structuredResult({ results, resultCount: results.length });
}

export function registerResearchTools(server: McpServer, attempts: AttemptCounter): void {
  const querySchema = { query: z.string().describe('What to search for') };
  server.registerTool(
    'search_knowledge_base',
    {
      title: 'Search the knowledge base',
      description: 'Searches help-center articles. No match is an empty list.',
      inputSchema: querySchema,
      annotations: { readOnlyHint: true },
    },
    ({ query }) => searchKnowledgeBase(query),
  );
  server.registerTool(
    'search_web',
    {
      title: 'Search the web',
      description: 'Searches the web through a rate-limited provider.',
      inputSchema: querySchema,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ query }) => searchWeb(query, attempts),
  );
  server.registerTool(
    'search_news',
    {
      title: 'Search news',
      description: 'Searches recent news articles.',
      inputSchema: querySchema,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    () => ({ isError: false, content: [{ type: 'text', text: 'No results found.' }] }),
  );
}
