import { SEARCH_TOOL_WORDS } from './rules';

/**
 * The words of a tool name: split at non-alphanumerics (`_`, `-`, `.`, `/`, spaces) and camelCase
 * boundaries, lowercased. `searchSupportTickets` → search, support, tickets; `brave_web_search` → brave, web,
 * search; `HTTPGetURL` → http, get, url.
 */
export function toolNameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
}

/**
 * A search-like tool answers a query with a list, so "nothing matched" is a valid empty result (DOMAIN.md
 * §1, §3): a name with one of the words search, list, query, find (or their plurals) — `search_docs`,
 * `listIssues`, `query_database`, `find_files`. A lookup by identifier is not search-like even when it says
 * "find": a name with the words `by` and then `id` (`findById`, `find_order_by_id`) answers one record, and
 * "not found" there means a wrong identifier (validation).
 */
export function isSearchLikeTool(name: string): boolean {
  const words = toolNameWords(name);
  if (!words.some((word) => SEARCH_TOOL_WORDS.has(word))) return false;
  const by = words.indexOf('by');
  return !(by >= 0 && words.slice(by + 1).includes('id'));
}
