// The fictional fleet of MCP servers, tools and failure texts the workload draws from: realistic sizes and
// shapes of the attributes the server stores, not realistic frequencies of anything in particular.
import { hex, int, pick } from './random.mjs';

export const SERVERS = [
  {
    name: 'github',
    version: '0.9.1',
    address: 'api.githubcopilot.com',
    port: 443,
    transport: 'tcp',
    tools: ['search_issues', 'get_pull_request', 'create_issue', 'list_commits', 'get_file_contents'],
    weight: 4,
  },
  {
    name: 'filesystem',
    version: '2025.7.1',
    address: '127.0.0.1',
    port: 8811,
    transport: 'tcp',
    tools: ['read_file', 'write_file', 'list_directory', 'search_files'],
    weight: 4,
  },
  {
    name: 'postgres-mcp',
    version: '0.3.0',
    address: 'db-tools.internal',
    port: 8080,
    transport: 'tcp',
    tools: ['query', 'list_tables', 'describe_table'],
    weight: 2,
  },
  {
    name: 'slack',
    version: '1.2.0',
    address: 'mcp.slack.com',
    port: 443,
    transport: 'tcp',
    tools: ['post_message', 'search_messages', 'list_channels'],
    weight: 1,
  },
  {
    name: 'brave-search',
    version: '0.6.2',
    address: 'localhost',
    port: 8931,
    transport: 'tcp',
    tools: ['web_search', 'local_search'],
    weight: 1,
  },
];
export const WEIGHTED_SERVERS = SERVERS.flatMap((server) => Array(server.weight).fill(server));

const REPOS = ['acme/web-app', 'acme/billing-service', 'errata-dev/errata', 'octo-org/infra', 'acme/mobile'];
const FILES = [
  'src/index.ts',
  'src/routes/orders.ts',
  'README.md',
  'package.json',
  'lib/payments/refund.py',
  'docs/setup.md',
];
const TABLES = ['orders', 'customers', 'invoice_lines', 'subscriptions', 'audit_log'];

/** Tool error result texts (~150–250 chars) as MCP servers return them, with the category a server might declare. */
export const ERRORS = [
  {
    servers: ['github'],
    category: 'rate_limited',
    retryable: true,
    text: () =>
      `GitHub API error 403: API rate limit exceeded for installation ID ${int(1e7, 9e7)}. Limit 5000 requests/hour, resets at ${new Date(Date.now() + int(60, 3600) * 1000).toISOString()}. See https://docs.github.com/rest/overview/rate-limits-for-the-rest-api`,
  },
  {
    servers: ['github'],
    category: 'not_found',
    retryable: false,
    text: () => {
      const repo = pick(REPOS);
      return `Not Found: repository "${repo}" does not exist or the token lacks access (GET /repos/${repo}/issues?state=open&per_page=50 returned 404). Check the owner and repository name, and that the token has the repo scope.`;
    },
  },
  {
    servers: ['filesystem'],
    category: 'validation',
    retryable: false,
    text: () =>
      `Error: ENOENT: no such file or directory, open '/home/dev/projects/${pick(REPOS).split('/')[1]}/${pick(FILES)}'. Allowed directories: /home/dev/projects, /tmp/agent-workspace. Use list_directory to find the file first.`,
  },
  {
    servers: ['filesystem'],
    category: 'permission',
    retryable: false,
    text: () =>
      `Error: Access denied - path outside allowed directories: /etc/${pick(['ssh/sshd_config', 'passwd', 'hosts', 'nginx/nginx.conf'])} not in /home/dev/projects, /tmp/agent-workspace. The server only reads and writes inside its allowed roots.`,
  },
  {
    servers: ['postgres-mcp'],
    category: 'validation',
    retryable: false,
    text: () =>
      JSON.stringify({
        error: {
          code: '42P01',
          message: `relation "${pick(TABLES)}_v${int(1, 3)}" does not exist`,
          position: int(10, 300),
          hint: 'Use list_tables to see the tables of schema public.',
          category: 'validation',
        },
      }),
  },
  {
    servers: ['postgres-mcp'],
    category: 'timeout',
    retryable: true,
    text: () =>
      `canceling statement due to statement timeout (30000 ms) while executing: SELECT o.id, o.total_cents, c.email FROM ${pick(TABLES)} o JOIN customers c ON c.id = o.customer_id WHERE o.created_at > now() - interval '${int(2, 90)} days'`,
  },
  {
    servers: ['slack'],
    category: 'rate_limited',
    retryable: true,
    text: () =>
      JSON.stringify({
        ok: false,
        error: 'ratelimited',
        retry_after: int(1, 60),
        response_metadata: {
          messages: ['[ERROR] too many requests to chat.postMessage for this workspace, retry later'],
        },
      }),
  },
  {
    servers: ['slack'],
    category: 'not_found',
    retryable: false,
    text: () =>
      `Slack API error channel_not_found: the channel C0${hex(4).toUpperCase()} does not exist, is archived, or the bot user is not a member. Invite the bot with /invite @errata-agent and retry the post_message call.`,
  },
  {
    servers: ['brave-search'],
    category: 'rate_limited',
    retryable: true,
    text: () =>
      `Brave Search API error: 429 Too Many Requests - {"type":"ErrorResponse","error":{"id":"${hex(8)}","status":429,"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan Free (1 req/s)."}}`,
  },
  {
    servers: ['github', 'filesystem', 'postgres-mcp', 'slack', 'brave-search'],
    category: 'invalid_argument',
    retryable: false,
    text: () =>
      `MCP error -32602: Invalid arguments for tool: [{"code":"invalid_type","expected":"string","received":"undefined","path":["${pick(['query', 'path', 'channel', 'owner'])}"],"message":"Required"},{"code":"too_small","minimum":1,"path":["limit"]}]`,
  },
];

export const SDK_RESOURCE = [
  ['service.name', 'support-agent'],
  ['service.version', '3.14.2'],
  ['service.instance.id', '6f1c2a9e-52b4-4c1e-9d3a-7b0f2e8c4d11'],
  ['deployment.environment.name', 'production'],
  ['telemetry.sdk.name', 'opentelemetry'],
  ['telemetry.sdk.language', 'nodejs'],
  ['telemetry.sdk.version', '2.12.1'],
  ['host.name', 'agent-worker-7'],
  ['process.pid', 48213],
  ['process.runtime.name', 'nodejs'],
  ['process.runtime.version', '20.19.4'],
];
