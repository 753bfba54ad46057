/**
 * The versioned rule tables of DOMAIN.md §1–§3, in one place. Everything that infers a category, a
 * retryability or a misclassification reads these tables; changing any of them (or the code that walks
 * them in classify.ts / retries.ts) means bumping RULES_VERSION, which forces a projection rebuild.
 */

/** Version of the rule set. Every derived record carries it; a bump means a projection rebuild. */
export const RULES_VERSION = 14;

/** The four canonical categories plus `unknown` (DOMAIN.md §1). */
export type Category = 'transient' | 'validation' | 'business' | 'permission' | 'unknown';

/** A failed call's category; `empty` marks empty-as-error calls (DOMAIN.md §3). */
export type FailureCategory = Category | 'empty';

/** Where the category came from: the first source that yields one (DOMAIN.md §1). */
export const CATEGORY_SOURCES = ['declared', 'code', 'text', 'none'] as const;
export type CategorySource = (typeof CATEGORY_SOURCES)[number];

/**
 * Declared category values (lowercased, `-` and spaces read as `_`) → canonical category. `not_found`
 * and `internal` are handled apart (see DECLARED_AMBIGUOUS).
 */
export const CATEGORY_SYNONYMS: Readonly<Record<string, Exclude<Category, 'unknown'>>> = {
  transient: 'transient',
  timeout: 'transient',
  unavailable: 'transient',
  rate_limit: 'transient',
  rate_limited: 'transient',
  upstream: 'transient',
  throttled: 'transient',
  validation: 'validation',
  invalid_input: 'validation',
  invalid_argument: 'validation',
  bad_request: 'validation',
  business: 'business',
  policy: 'business',
  conflict: 'business',
  confirmation_required: 'business',
  precondition: 'business',
  permission: 'permission',
  authorization: 'permission',
  authentication: 'permission',
  forbidden: 'permission',
  unauthorized: 'permission',
};

/** Declared values that are kept raw: `internal` → unknown; `not_found` → validation or empty-as-error. */
export const DECLARED_AMBIGUOUS = { notFound: 'not_found', internal: 'internal' } as const;

/** Keys read as a declared category, in structuredContent, JSON text, `error: {…}` and `_meta`. */
export const CATEGORY_KEYS = ['errorCategory', 'error_category', 'error.category', 'category'] as const;

/** Keys read as declared retryability ("carry one, accept all"), first found wins. */
export const RETRYABLE_KEYS = ['isRetryable', 'retriable', 'retryable', 'automatic_retry_allowed'] as const;

/** Keys read as a declared error code. */
export const CODE_KEYS = ['code', 'errorCode', 'error_code'] as const;

/** Keys read as an HTTP status in a payload (number or numeric string, 100–599). */
export const HTTP_STATUS_KEYS = ['statusCode', 'status_code', 'httpStatus', 'http_status', 'status'] as const;

/** Keys read as a declared retry-after, with the factor to milliseconds. */
export const RETRY_AFTER_KEYS: readonly (readonly [key: string, toMs: number])[] = [
  ['retryAfterMs', 1],
  ['retry_after_ms', 1],
  ['retryAfterSeconds', 1000],
  ['retry_after_seconds', 1000],
  ['retryAfter', 1000],
  ['retry_after', 1000],
];

/** JSON-RPC codes → category (`code` source). -32000 is an extension: the SDK's ConnectionClosed. */
export const JSONRPC_CODE_CATEGORIES: Readonly<Record<string, Exclude<Category, 'unknown'>>> = {
  '-32602': 'validation',
  '-32600': 'validation',
  '-32700': 'validation',
  '-32001': 'transient',
  '-32000': 'transient',
};

/**
 * `error.type`s that name an authorization failure → permission (`code` source): the MCP SDK's HTTP transports
 * throw `UnauthorizedError` after a 401 or 403 they could not authorize past, without the status.
 */
export const AUTHORIZATION_ERROR_TYPES: ReadonlySet<string> = new Set(['UnauthorizedError']);

/** HTTP status codes → category (`code` source). */
export const HTTP_CODE_CATEGORIES: Readonly<Record<string, Exclude<Category, 'unknown'>>> = {
  '401': 'permission',
  '403': 'permission',
  '408': 'transient',
  '429': 'transient',
  '502': 'transient',
  '503': 'transient',
  '504': 'transient',
  '409': 'business',
  '422': 'business',
};

/** An HTTP status quoted in a message ("Request failed with status code 503", "HTTP 429"). */
export const HTTP_STATUS_IN_TEXT = /\b(?:HTTP(?:\/\d(?:\.\d)?)?|status(?: code)?)[\s:=]+([1-5]\d\d)\b/i;

export interface TextRule {
  readonly id: string;
  readonly category: Exclude<Category, 'unknown'>;
  readonly pattern: RegExp;
}

/**
 * When several categories match one message, the first in this order wins ("Access denied - path
 * outside allowed directories" is permission, not business).
 */
export const TEXT_PRECEDENCE = ['permission', 'transient', 'validation', 'business'] as const;

/**
 * Text rules (`text` source), matched case-insensitively on whole words against the status message and
 * the human-readable strings of the result (for JSON payloads: every string value; `_` reads as a space
 * so codes such as `RATE_LIMITED` or `INVALID_DATE` count as words).
 */
export const TEXT_RULES: readonly TextRule[] = [
  { id: 'permission.permission', category: 'permission', pattern: /\bpermissions?\b/i },
  { id: 'permission.access_denied', category: 'permission', pattern: /\baccess (?:is )?denied\b/i },
  { id: 'permission.forbidden', category: 'permission', pattern: /\bforbidden\b/i },
  { id: 'permission.unauthorized', category: 'permission', pattern: /\b(?:un|not )authori[sz]ed\b/i },
  { id: 'permission.errno', category: 'permission', pattern: /\bE(?:ACCES|PERM)\b/ },
  {
    id: 'permission.insufficient',
    category: 'permission',
    pattern: /\binsufficient (?:scopes?|privileges?|roles?|rights)\b/i,
  },
  // Seed 000's permission examples: "Missing OAuth scope", "Service account lacks access", "User cannot view
  // financial records", "Credential expired or invalid" (permission before validation: not an invalid argument).
  {
    id: 'permission.missing_scope',
    category: 'permission',
    pattern: /\bmissing (?:the )?(?:required )?(?:oauth2?|api|access|token|permission) scopes?\b/i,
  },
  {
    id: 'permission.lacks',
    category: 'permission',
    pattern:
      /\black(?:s|ing)? (?:the )?(?:required )?(?:access|permissions?|privileges?|rights|roles?|scopes?)\b/i,
  },
  {
    id: 'permission.cannot_view',
    category: 'permission',
    pattern:
      /\b(?:user|caller|account|client|role) (?:cannot|can't|can not|may not|is not allowed to) (?:view|see|read|access)\b/i,
  },
  {
    id: 'permission.credentials',
    category: 'permission',
    pattern:
      /\b(?:credentials?|api key|access token|auth(?:entication)? token|jwt|session|password) (?:(?:has|have|is|are) )?(?:expired|revoked)\b|\bexpired (?:credentials?|api key|access token|auth(?:entication)? token|jwt|session)\b|\binvalid (?:credentials?|api key|access token|auth(?:entication)? token)\b/i,
  },
  { id: 'transient.timed_out', category: 'transient', pattern: /\btimed out\b|\btime-?out\b/i },
  {
    id: 'transient.network',
    category: 'transient',
    pattern:
      /\bE(?:TIMEDOUT|CONNRESET|CONNREFUSED|AI_AGAIN)\b|\bsocket hang up\b|\bconnection (?:reset|refused)\b/i,
  },
  { id: 'transient.rate_limit', category: 'transient', pattern: /\brate[ -]?limit(?:ed|ing|s)?\b/i },
  { id: 'transient.too_many_requests', category: 'transient', pattern: /\btoo many requests\b/i },
  { id: 'transient.unavailable', category: 'transient', pattern: /\bunavailable\b/i },
  { id: 'transient.throttled', category: 'transient', pattern: /\bthrottl(?:ed|ing)\b/i },
  { id: 'transient.try_later', category: 'transient', pattern: /\btry again later\b|\btemporar(?:y|ily)\b/i },
  { id: 'transient.overloaded', category: 'transient', pattern: /\boverloaded\b/i },
  // Seed 000: "Upstream API not responding".
  {
    id: 'transient.not_responding',
    category: 'transient',
    pattern: /\bnot responding\b|\bdid not respond\b|\bno response from\b/i,
  },
  { id: 'validation.input_validation', category: 'validation', pattern: /\binput validation error\b/i },
  { id: 'validation.must_be', category: 'validation', pattern: /\bmust be\b/i },
  { id: 'validation.invalid', category: 'validation', pattern: /\binvalid\b|\bnot a valid\b/i },
  { id: 'validation.expected', category: 'validation', pattern: /\bexpected\b/i },
  { id: 'validation.required', category: 'validation', pattern: /\brequired\b/i },
  { id: 'validation.malformed', category: 'validation', pattern: /\bmalformed\b/i },
  // Seed 000's validation examples: "Wrong ID format", "Amount is negative", "Enum value is not allowed" (validation
  // before business: the value, not the request, is refused), "Date range has start_date after end_date".
  {
    id: 'validation.format',
    category: 'validation',
    pattern: /\b(?:wrong|bad|incorrect|unsupported|unrecognized|unrecognised) (?:[\w-]+ ){0,2}format\b/i,
  },
  {
    id: 'validation.negative',
    category: 'validation',
    pattern:
      /\b(?:amount|quantity|value|number|price|total|limit|count|size) (?:is|was) negative\b|\b(?:cannot|can't|must not) be negative\b/i,
  },
  {
    id: 'validation.enum',
    category: 'validation',
    pattern: /\benum(?:eration)? value\b|\bnot one of\b|\bnot an allowed value\b/i,
  },
  {
    id: 'validation.date_order',
    category: 'validation',
    pattern:
      /\b(?:start|from) (?:date|time) (?:is |was |comes )?(?:after|later than) (?:the )?(?:end|to) (?:date|time)\b|\b(?:end|to) (?:date|time) (?:is |was |comes )?(?:before|earlier than) (?:the )?(?:start|from) (?:date|time)\b/i,
  },
  { id: 'business.exceeds', category: 'business', pattern: /\bexceed(?:s|ed)?\b/i },
  { id: 'business.not_allowed', category: 'business', pattern: /\bnot allowed\b/i },
  { id: 'business.outside', category: 'business', pattern: /\boutside\b/i },
  { id: 'business.policy', category: 'business', pattern: /\bpolicy\b/i },
  { id: 'business.window', category: 'business', pattern: /\bwindow\b/i },
  // Seed 000: "Order cannot be cancelled after shipment", "Account cannot be deleted while invoices are unpaid".
  {
    id: 'business.cannot_be_now',
    category: 'business',
    pattern: /\b(?:cannot|can't|can not) be \w+ed (?:after|while|once|until|unless|before)\b/i,
  },
];

/**
 * Categories whose text rules name an access failure (seeds 003, 004: a timeout, an outage or a denial needs a
 * retry decision; a valid empty result does not). A "no results" message, or an empty list, whose own words name
 * one of them is that failure, not an empty-as-error: nothing came back because the tool could not look.
 */
export const ACCESS_FAILURE_CATEGORIES: ReadonlySet<FailureCategory> = new Set(['permission', 'transient']);

/** Empty-as-error (§3): declared codes meaning "no match" on any tool. */
export const EMPTY_CODE_ANY_TOOL = /^(?:NO_?RESULTS?|NO_?MATCH(?:ES)?|ZERO_?RESULTS|EMPTY_?RESULTS?)$/i;
/** Empty-as-error (§3): declared codes meaning "not found", only on search/list/query/find tools. */
export const EMPTY_CODE_SEARCH_TOOL = /(?:^|_)NOT_?FOUND$|^NO_[A-Z0-9_]+_FOUND$/i;
/** Empty-as-error (§3): messages meaning "no match" on any tool. */
export const EMPTY_TEXT_ANY_TOOL =
  /\bno (?:results?|matches)\b|\b(?:0|zero) (?:results|matches|hits|items|records|rows)\b|\bnothing (?:found|matched)\b/i;
/**
 * Empty-as-error (§3): "not found" messages, only on search/list/query/find tools. "No matching order" belongs
 * here: on a lookup it says the identifier matched nothing, as "Order not found" does (§1: validation).
 */
export const EMPTY_TEXT_SEARCH_TOOL = /\bnot found\b|\bno (?:\w+ ){1,2}found\b|\bno matching \w+/i;
/** The MCP SDK v1 unknown-tool message ("Tool x not found"): never an empty result. */
export const UNKNOWN_TOOL_TEXT = /\btool \S+ not found\b|\bunknown tool\b/i;

/**
 * Failure-as-empty (§3): a successful result whose human-readable text says it failed. Bare "error" or
 * "failed" inside data (a ticket titled "Login error") does not count: the word must head the message
 * or appear in one of these failure phrasings.
 */
export const FAILURE_TEXT_RULES: readonly { readonly id: string; readonly pattern: RegExp }[] = [
  { id: 'failure.leading_word', pattern: /^\W*(?:error|failed|failure|fatal|exception|denied)\b/i },
  {
    id: 'failure.error_phrase',
    pattern: /\berror\s*[:!]|\ban? (?:\w+ )?error\b|\berror (?:occurred|was thrown)\b/i,
  },
  {
    id: 'failure.failed_phrase',
    pattern: /\bfailed to\b|\b(?:request|operation|call|query|search|lookup) failed\b/i,
  },
  { id: 'failure.denied', pattern: /\b(?:access|permission|request) denied\b/i },
  { id: 'failure.timed_out', pattern: /\btimed out\b/i },
  { id: 'failure.exception', pattern: /exception\b|\bTraceback \(most recent call last\)/i },
];

/** Payload keys whose string values are read as the result's message for failure-as-empty. */
/**
 * Keys of a customer-facing explanation in a failure payload (seed 003: business errors carry one the agent can
 * relay, so that it explains the policy instead of escalating). Read with the declared-metadata lookup.
 */
export const CUSTOMER_EXPLANATION_KEYS = [
  'customerExplanation',
  'customer_explanation',
  'customerMessage',
  'customer_message',
  'userMessage',
  'user_message',
] as const;

export const MESSAGE_KEYS = [
  'message',
  'msg',
  'description',
  'detail',
  'details',
  'error',
  'reason',
  'summary',
  'text',
] as const;

/** Payload `status` values that mean the call failed (failure-as-empty). */
export const FAILED_STATUS_VALUES: ReadonlySet<string> = new Set(['error', 'failed', 'failure', 'fail']);

/** Tool-name words that make a tool search-like (§1 `not_found`, §3 empty-as-error). */
export const SEARCH_TOOL_WORDS: ReadonlySet<string> = new Set([
  'search',
  'searches',
  'list',
  'lists',
  'query',
  'queries',
  'find',
  'finds',
]);

/** Error-contract finding rules (DOMAIN.md §7) detected on single calls; `missing-propagation-context` is per report. */
export const FINDING_RULES = [
  'untyped-error',
  'empty-as-error',
  'failure-as-empty',
  'invisible-metadata',
  'retryable-mismatch',
  'wrong-channel',
  'leaky-error',
  'raw-exception',
  'missing-propagation-context',
] as const;
export type FindingRule = (typeof FINDING_RULES)[number];

/** JSON-RPC codes that are protocol failures by nature: a tool execution failure never belongs there. */
export const PROTOCOL_LEVEL_CODES: ReadonlySet<number> = new Set([-32700, -32600, -32601, -32001, -32000]);

/**
 * What a result text must not show the model (leaky-error, DOMAIN.md §6): stack frames, absolute filesystem
 * paths, SQL, and secrets (the redaction placeholders mark where one was).
 */
export const LEAK_RULES: readonly { readonly id: string; readonly pattern: RegExp }[] = [
  {
    id: 'leak.stack_trace',
    pattern: /\n\s+at [\w$.<>]+ \(|\bat [\w$.<>]+ \([^)]*:\d+:\d+\)|Traceback \(most recent call last\)/,
  },
  {
    id: 'leak.path',
    pattern:
      /(?:^|[\s'"(=:])(?:\/(?:home|Users|usr|var|etc|opt|srv|app|root|tmp)\/[^\s'"]+|[A-Za-z]:\\[^\s'"]+)/,
  },
  {
    id: 'leak.sql',
    pattern:
      // The column list is bounded: unbounded, each SELECT tried every later FROM (100 KB of "SELECT " took 1.6 s).
      /\b(?:SELECT\s+[\w*,\s.]{1,256}?\s+FROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b|syntax error at or near|\brelation "[^"]+" does not exist/i,
  },
  { id: 'leak.secret', pattern: /\[REDACTED:(?!email\]|number\])[a-z_]+\]/ },
];

/** A raw exception handed to the model instead of an error contract (raw-exception): "TypeError: …", "Unhandled …". */
export const RAW_EXCEPTION =
  /^\s*(?:Uncaught |Unhandled )?(?:[A-Z]\w*(?:Error|Exception)|Error|panic|Traceback)\b[:\s(]/;
