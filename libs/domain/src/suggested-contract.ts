/**
 * The fix Errata suggests for a finding (DOMAIN.md §7): the exact result the tool should return instead, in the
 * envelope the seeds recommend — `isError`, a text block that mirrors `structuredContent`, and `structuredContent`
 * carrying `errorCategory`, `isRetryable`, a stable `code`, a `description` and, for business errors, a
 * customer-facing explanation — plus a TypeScript handler for the MCP SDK, what the fix would have saved in the
 * window, and a Markdown rendering an owner can paste into their tracker. Pure.
 */
import { categoryOfTexts } from './classify';
import type { Finding } from './findings-report';
import { escapeControls } from './escape-controls';
import { declaredErrorOf, type DeclaredError } from './result-signals';
import type { Category } from './rules';
import { RETRY_SUCCEEDED } from './trace-derivation';

/** What a failing tool should put in `structuredContent` (and mirror as JSON text). */
export interface ErrorEnvelope {
  readonly errorCategory: Exclude<Category, 'unknown'>;
  readonly isRetryable: boolean;
  readonly code: string;
  readonly description: string;
  readonly customerExplanation?: string;
  /** How long to wait before retrying, when the tool already says so (a retryable failure only). */
  readonly retryAfterMs?: number;
}

export interface SuggestedResult {
  readonly isError: boolean;
  readonly content: readonly [{ readonly type: 'text'; readonly text: string }];
  readonly structuredContent: Readonly<Record<string, unknown>>;
}

export interface SuggestedContract {
  readonly findingId: string;
  readonly rule: Finding['rule'];
  readonly server: string | null;
  readonly tool: string;
  /** One sentence: what is wrong and what to return instead. */
  readonly summary: string;
  /** The result to return (for missing propagation context: the report attributes to send). */
  readonly result: SuggestedResult | null;
  readonly reportAttributes: Readonly<Record<string, unknown>> | null;
  readonly handler: string;
  /** What the offending calls cost in the window: what returning the suggested result would have saved. */
  readonly savings: {
    readonly retries: number;
    readonly wastedRetries: number;
    readonly wastedMs: number;
    readonly escalations: number;
  };
  readonly markdown: string;
}

/**
 * What else is known about the tool besides the finding: its most frequent failure category, and the error fields its
 * sampled offences declared (`declaredErrorOfCall`: their attributes, structured content and text as logged; a
 * sample's stored text alone loses a code the tool declared only in `structuredContent`).
 */
export interface ContractContext {
  readonly dominantCategory: Category | null;
  readonly sampledDeclarations?: readonly DeclaredError[];
}

const RETRYABLE: Record<ErrorEnvelope['errorCategory'], boolean> = {
  transient: true,
  validation: true, // after correcting the arguments (seed 000)
  business: false,
  permission: false,
};

const CODES: Record<ErrorEnvelope['errorCategory'], string> = {
  transient: 'UPSTREAM_UNAVAILABLE',
  validation: 'INVALID_ARGUMENTS',
  business: 'POLICY_VIOLATION',
  permission: 'ACCESS_DENIED',
};

const DESCRIPTIONS: Record<ErrorEnvelope['errorCategory'], (tool: string) => string> = {
  transient: (tool) =>
    `${tool} could not reach its backend in time. The request is valid and may succeed if retried after a short delay.`,
  validation: (tool) =>
    `${tool} received arguments it cannot use. Correct the arguments as described and retry; the same call will fail again.`,
  business: (tool) =>
    `${tool} refused the request because it violates a business rule. Retrying will not succeed; explain the rule or escalate.`,
  permission: (tool) =>
    `${tool} is not allowed to do this with the caller's credentials. Do not retry; request access or escalate.`,
};

/**
 * The category a fix should declare: the evidence's (a failure declared not retryable that succeeded when retried
 * unchanged was transient, unless other evidence names a business or permission failure), else the tool's most
 * frequent, else what the sampled texts say (a failure reported as success has no category of its own: "ERROR:
 * Permission denied" is a permission error, and a fix must not tell agents to retry it), else transient.
 */
function categoryFor(finding: Finding, context: ContractContext): ErrorEnvelope['errorCategory'] {
  for (const evidence of Object.keys(finding.evidence)) {
    const declared = /^declared_retryable:(business|permission)$/.exec(evidence)?.[1];
    if (declared === 'business' || declared === 'permission') return declared;
    if (/^jsonrpc:-3260[02]$/.test(evidence)) return 'validation';
  }
  if (Object.hasOwn(finding.evidence, RETRY_SUCCEEDED)) return 'transient';
  const dominant = context.dominantCategory;
  if (dominant !== null && dominant !== 'unknown') return dominant;
  const texts = finding.samples.flatMap((sample) => (sample.text === null ? [] : [sample.text]));
  const said = categoryOfTexts(texts);
  return said !== null && Object.hasOwn(RETRYABLE, said)
    ? (said as ErrorEnvelope['errorCategory'])
    : 'transient';
}

/** A code that reads as one: a name, not a number or a sentence. */
const CODE_LIKE = /^[A-Za-z][\w.-]*$/;

/**
 * A stable code: the one the tool already uses, when the evidence shows it or its sampled failures declare one (its
 * clients may depend on it: a fix that only corrects the retryability or mirrors the metadata must not rename it),
 * else one per category.
 */
function codeFor(
  finding: Finding,
  context: ContractContext,
  category: ErrorEnvelope['errorCategory'],
): string {
  for (const evidence of Object.keys(finding.evidence)) {
    const code = /(?:^|:)code:([A-Za-z][\w.-]*)$/.exec(evidence)?.[1];
    if (code !== undefined) return code.toUpperCase();
  }
  for (const declared of context.sampledDeclarations ?? []) {
    const code = declared.code?.trim() ?? '';
    if (CODE_LIKE.test(code)) return code;
  }
  for (const sample of finding.samples) {
    const declared = sample.text === null ? null : declaredErrorOf(null, sample.text).code;
    if (declared !== null && CODE_LIKE.test(declared)) return declared;
  }
  return CODES[category];
}

/**
 * The wait the tool already asks for before a retry (its sampled failures' first `retryAfterMs`), kept for a
 * transient failure: the only kind a later retry of the same call may fix.
 */
function retryAfterFor(
  context: ContractContext,
  category: ErrorEnvelope['errorCategory'],
): number | undefined {
  if (category !== 'transient') return undefined;
  const declared = (context.sampledDeclarations ?? []).find(
    (declaration) =>
      declaration.retryAfterMs !== null &&
      Number.isSafeInteger(declaration.retryAfterMs) &&
      declaration.retryAfterMs > 0,
  );
  return declared?.retryAfterMs ?? undefined;
}

export function errorEnvelope(finding: Finding, context: ContractContext): ErrorEnvelope {
  const category = categoryFor(finding, context);
  const retryAfterMs = retryAfterFor(context, category);
  return {
    errorCategory: category,
    isRetryable: RETRYABLE[category],
    code: codeFor(finding, context, category),
    description: DESCRIPTIONS[category](finding.tool),
    ...(category === 'business'
      ? {
          customerExplanation:
            'We could not complete this request because of our policy. <Explain the rule here.>',
        }
      : {}),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

const mirrored = (isError: boolean, structured: Record<string, unknown>): SuggestedResult => ({
  isError,
  content: [{ type: 'text', text: JSON.stringify(structured) }],
  structuredContent: structured,
});

const SUMMARIES: Record<Finding['rule'], string> = {
  'untyped-error':
    'fails without saying why: return the error category, retryability and a stable code with every failure',
  'empty-as-error': 'reports "no results" as an error: an empty result is a success with an empty list',
  'failure-as-empty': 'reports failures as success: set isError and say what failed',
  'invisible-metadata':
    'puts its error metadata where the model cannot read it: mirror structuredContent in a text block',
  'retryable-mismatch': 'declares a failure retryable that can never succeed on retry: set isRetryable false',
  'wrong-channel':
    'answers a tool failure with a JSON-RPC error: return a tool result with isError so the model can react',
  'leaky-error':
    'leaks internals (paths, stack frames, SQL or secrets) in its errors: describe the failure instead',
  'raw-exception': 'returns raw exception text: return a structured error instead',
  'missing-propagation-context':
    'hands failures back without what the coordinator needs: send the category, what was attempted, the partial results and alternatives',
};

/** `retryable-mismatch` on each kind of evidence: retryable declared wrongly, non-retryable declared wrongly, or both. */
const RETRYABILITY_SUMMARIES = {
  declaredRetryable: SUMMARIES['retryable-mismatch'],
  declaredNotRetryable:
    'declares a failure not retryable that succeeded when retried with the same arguments: set isRetryable true',
  both:
    'declares some failures retryable that can never succeed on retry, and others not retryable that succeeded when ' +
    'retried with the same arguments: set isRetryable false on business and permission failures, true on transient ones',
} as const;

/** What is wrong and what to do, for the evidence seen. */
function summaryOf(finding: Finding): string {
  if (finding.rule !== 'retryable-mismatch') return SUMMARIES[finding.rule];
  const provedRetryable = Object.hasOwn(finding.evidence, RETRY_SUCCEEDED);
  const declaredRetryable = Object.keys(finding.evidence).some((evidence) => evidence !== RETRY_SUCCEEDED);
  return provedRetryable
    ? declaredRetryable
      ? RETRYABILITY_SUMMARIES.both
      : RETRYABILITY_SUMMARIES.declaredNotRetryable
    : RETRYABILITY_SUMMARIES.declaredRetryable;
}

function handlerSnippet(tool: string, envelope: ErrorEnvelope | null, emptyOk: boolean): string {
  // The name is the server's, anything it chose: a JSON string is a JavaScript string literal whatever it holds.
  const name = JSON.stringify(tool);
  if (emptyOk) {
    return `server.registerTool(${name}, { description, inputSchema }, async (args) => {
  const items = await search(args);
  // No match is a valid answer, not an error: the agent must not retry it.
  const result = { items, count: items.length };
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
});`;
  }
  const failure = JSON.stringify(envelope, null, 2).replace(/\n/g, '\n    ');
  return `server.registerTool(${name}, { description, inputSchema }, async (args) => {
  try {
    const result = await run(args);
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  } catch (error) {
    // Log the details with a correlation id; tell the model only what it can act on.
    const failure = ${failure};
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(failure) }], structuredContent: failure };
  }
});
// With an outputSchema, let it admit the error shape too (e.g. z.union([Success, ToolError])).`;
}

export function suggestContract(finding: Finding, context: ContractContext): SuggestedContract {
  const subject = finding.server === null ? finding.tool : `${finding.server}/${finding.tool}`;
  let result: SuggestedResult | null = null;
  let reportAttributes: Record<string, unknown> | null = null;
  let envelope: ErrorEnvelope | null = null;
  if (finding.rule === 'empty-as-error') {
    result = mirrored(false, { items: [], count: 0 });
  } else if (finding.rule === 'missing-propagation-context') {
    reportAttributes = {
      'errata.subagent.status': 'partial',
      'errata.error.category': 'transient',
      'errata.subagent.attempted': ['<what the subagent tried>'],
      'errata.subagent.partial_results': '<how much came back>',
      'errata.subagent.alternatives': ['<what the coordinator could do instead>'],
    };
  } else {
    envelope = errorEnvelope(finding, context);
    result = mirrored(true, { ...envelope });
  }
  const savings = {
    retries: finding.retriesCaused,
    wastedRetries: finding.wastedRetries,
    wastedMs: finding.wastedMs,
    escalations: finding.escalationsCaused,
  };
  const handler =
    finding.rule === 'missing-propagation-context'
      ? `recordSubagentReport(${JSON.stringify(
          {
            status: 'partial',
            category: 'transient',
            attempted: ['search'],
            partialResults: 2,
            alternatives: ['ask for a link'],
          },
          null,
          2,
        )});`
      : handlerSnippet(finding.tool, envelope, finding.rule === 'empty-as-error');
  const summary = `${subject} ${summaryOf(finding)}.`;
  return {
    findingId: finding.id,
    rule: finding.rule,
    server: finding.server,
    tool: finding.tool,
    summary,
    result,
    reportAttributes,
    handler,
    savings,
    // The summary again, with the names as code: as text they could be read as HTML or Markdown.
    markdown: markdownOf(
      finding,
      `${markdownCode(subject)} ${summaryOf(finding)}.`,
      result ?? reportAttributes,
      handler,
      savings,
    ),
  };
}

/** The longest run of backticks in `text` (0 when it has none). */
const longestBacktickRun = (text: string): number =>
  Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));

/**
 * `text` as a Markdown code span (CommonMark): a tracker shows it as written, never as HTML or formatting. Server,
 * tool and version names are whatever the servers chose (`<script>`, backticks, `*`): the delimiters are one
 * backtick longer than any run inside, padded with a space when the text starts or ends with a backtick or a space
 * (one such space is stripped on each side), line breaks, which would end a heading, become spaces, and the other
 * control characters and bidi controls are written as escapes (`escapeControls`: a terminal showing the Markdown
 * would run them, and an override reverses the names beside it).
 */
export function markdownCode(text: string): string {
  const oneLine = escapeControls(text.replace(/[\r\n]+/g, ' '));
  const delimiter = '`'.repeat(longestBacktickRun(oneLine) + 1);
  const padding = /^[` ]|[` ]$/.test(oneLine) ? ' ' : '';
  return `${delimiter}${padding}${oneLine}${padding}${delimiter}`;
}

/**
 * A fenced code block whose fence no backtick run inside can close early. Its lines' control characters and bidi
 * controls are escaped: they come from names inside JSON and JavaScript string literals, where the escape means the
 * same, and left raw, an override would reorder the code as shown (a "Trojan Source" snippet).
 */
function markdownFence(language: string, code: string): string {
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(code) + 1));
  const escaped = code.split('\n').map(escapeControls).join('\n');
  return `${fence}${language}\n${escaped}\n${fence}`;
}

function markdownOf(
  finding: Finding,
  summary: string,
  shape: unknown,
  handler: string,
  savings: SuggestedContract['savings'],
): string {
  const evidence = Object.entries(finding.evidence)
    .map(([value, count]) => `${markdownCode(value)} × ${count}`)
    .join(', ');
  const versions = finding.serverVersions.map(markdownCode).join(', ');
  return [
    `## ${finding.rule}: ${finding.server === null ? '(subagent)' : markdownCode(finding.server)} / ${markdownCode(finding.tool)}`,
    '',
    summary,
    '',
    `- Seen ${finding.count} times (${(finding.rate * 100).toFixed(1)} % of calls), ${finding.firstSeen} – ${finding.lastSeen}`,
    `- Server versions: ${finding.serverVersions.length === 0 ? 'unknown' : versions}`,
    `- Evidence: ${evidence}`,
    `- Cost in the window: ${savings.retries} retries (${savings.wastedRetries} wasted, ${savings.wastedMs} ms), ${savings.escalations} escalations`,
    '',
    finding.rule === 'missing-propagation-context' ? 'Report instead:' : 'Return instead:',
    '',
    markdownFence('json', JSON.stringify(shape, null, 2)),
    '',
    markdownFence('ts', handler),
    '',
    `Errata finding ${markdownCode(finding.id)}.`,
  ].join('\n');
}
