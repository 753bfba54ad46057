/**
 * The response bodies of the REST API, OTLP ingest and the health endpoints, as OpenAPI 3.0 schema components: what
 * `/docs-json` declares under `components.schemas`, and what the controllers reference with `ApiOk`/`ApiErrors`.
 * The shapes are those of the services and of @errata/domain's reports; test/openapi-contract.e2e.spec.ts validates
 * real answers against them. A nullable reference is `{ nullable: true, allOf: [ref] }`.
 */
import { applyDecorators } from '@nestjs/common';
import { ApiResponse, type ReferenceObject, type SchemaObject } from '@nestjs/swagger';
import {
  CATEGORY_SOURCES,
  COVERAGE_BUCKETS,
  ESCALATION_CATEGORIES,
  FINDING_RULES,
  FIX_STATES,
  PROPAGATION_ELEMENTS,
  RETRY_LABELS,
  RETRY_WASTE_SAMPLES,
  TIMELINE_RUNS_PAGE,
} from '@errata/domain';
import { FINDING_ID_FORM } from './findings-page';
import { DELIVERY_STATUSES } from '../repositories/delivery.repository';
import { RETRY_WASTE_GROUPINGS } from '../services/retry-waste.service';

type Schema = SchemaObject | ReferenceObject;

const described = <S extends SchemaObject>(schema: S, description?: string): S =>
  description === undefined ? schema : { ...schema, description };
const integer = (description?: string): SchemaObject => described({ type: 'integer' }, description);
const number = (description?: string): SchemaObject => described({ type: 'number' }, description);
const string = (description?: string): SchemaObject => described({ type: 'string' }, description);
const boolean = (description?: string): SchemaObject => described({ type: 'boolean' }, description);
const dateTime = (description?: string): SchemaObject =>
  described({ type: 'string', format: 'date-time' }, description);
const uuid = (): SchemaObject => ({ type: 'string', format: 'uuid' });
const oneOf = (values: readonly string[], description?: string): SchemaObject =>
  described({ type: 'string', enum: [...values] }, description);
/** OpenAPI 3.0's `nullable` does not widen an `enum`: null is one of its values too. */
const nullable = (schema: SchemaObject): SchemaObject => ({
  ...schema,
  nullable: true,
  ...(schema.enum === undefined ? {} : { enum: [...schema.enum, null] }),
});
const array = (items: Schema, description?: string): SchemaObject =>
  described({ type: 'array', items }, description);
/** A map from keys the data decides to values of one schema. */
const map = (values: Schema, description?: string): SchemaObject =>
  described({ type: 'object', additionalProperties: values }, description);
/** An object whose every property is always present (nullable ones as null), save those named `optional`. */
function object(
  properties: Record<string, Schema>,
  options: { readonly optional?: readonly string[]; readonly description?: string } = {},
): SchemaObject {
  const required = Object.keys(properties).filter((name) => !options.optional?.includes(name));
  return described(
    { type: 'object', properties, ...(required.length > 0 ? { required } : {}) },
    options.description,
  );
}
/** One integer per key, every key present. */
const counts = (keys: readonly string[], description?: string): SchemaObject =>
  object(Object.fromEntries(keys.map((key) => [key, integer()])), { description });

const FAILURE_CATEGORIES = ESCALATION_CATEGORIES;
const OUTCOMES = ['ok', 'ok_empty', 'tool_error', 'protocol_error', 'timeout', 'transport_error'];
const SUBAGENT_STATUSES = ['complete', 'partial', 'failed'];
const ESCALATION_TARGETS = ['human', 'user', 'coordinator'];
const AVOIDABLE_REASONS = ['explained_business', 'unretried_transient', 'uncorrected_validation'];
const MISCLASSIFICATION_DIRECTIONS = ['emptyAsError', 'failureAsEmpty'];
const GRADES = ['A', 'B', 'C', 'D', 'F'];
const WEBHOOK_TYPES = ['errata.fix.suggested', 'errata.fix.verified', 'errata.fix.regressed'];

const rulesVersion = integer('Version of the derivation rules the figures were computed under.');
const traceId = string('Trace id (32 lowercase hex digits).');
const spanId = string('Span id (16 lowercase hex digits).');
const runId = string(
  'Agent run id: its invoke_agent span id, or `trace:<traceId>` when the trace is the run.',
);
const findingId = string(`Finding id: ${FINDING_ID_FORM} derived from server, tool and rule.`);
const serverName = nullable(
  string('MCP server name (serverInfo.name); null when the server did not say its name.'),
);
const rate = (what: string) => number(`${what} (0–1).`);
const nullableRate = (what: string, when: string) => nullable(number(`${what} (0–1); null ${when}.`));
const NEXT_ATTEMPT_AT = nullable(
  dateTime(
    'When the next attempt is due; null when none will be made (delivered, dead-lettered or disabled, until redelivered).',
  ),
);
const wastedMs = integer('Duration of the wasted retries, in milliseconds.');

const findingProperties = {
  id: findingId,
  server: nullable(
    string(
      'MCP server name; null when the server did not say its name, and for missing-propagation-context (a subagent).',
    ),
  ),
  tool: string('Tool name; for missing-propagation-context the subagent’s name.'),
  rule: oneOf(FINDING_RULES, 'Error-contract rule (DOMAIN.md §7).'),
  count: integer('Offending calls (for missing-propagation-context: reports).'),
  rate: rate(
    'count over all calls of the tool (for missing-propagation-context: the partial and failed reports)',
  ),
  firstSeen: dateTime('Start of the first offence in the window.'),
  lastSeen: dateTime('Start of the last offence in the window.'),
  serverVersions: array(
    string(),
    'Server versions seen offending, oldest first (as semantic versioning orders them).',
  ),
  evidence: map(integer(), 'Evidence values and how often each was seen, most frequent first.'),
  retriesCaused: integer('Retries of offending calls.'),
  wastedRetries: integer('Wasted retries of offending calls.'),
  wastedMs,
  escalationsCaused: integer('Escalations attributed to offending calls.'),
};

const fixProperties = {
  findingId,
  server: serverName,
  tool: string(),
  rule: oneOf(FINDING_RULES),
  state: oneOf(FIX_STATES, 'Where the fix stands in its lifecycle.'),
  badVersions: array(
    string(),
    'Server versions seen violating the rule: when it was suggested, then before its verification, and on regressing.',
  ),
  suggestedAt: dateTime(),
  deliveredAt: nullable(dateTime('Latest delivery to an owner; null before one.')),
  acknowledgedAt: nullable(dateTime('Null before an acknowledgement, and again after a regression.')),
  acknowledgedBy: nullable(string('Who acknowledged: `api`, `cli` or `mcp`.')),
  verifiedAt: nullable(dateTime()),
  verifiedVersion: nullable(string('The server version that verified the fix.')),
  regressedAt: nullable(dateTime()),
};

const ownerProperties = {
  id: uuid(),
  projectId: integer(),
  serverName: string('MCP server name (serverInfo.name); registered as `server`.'),
  versionRange: nullable(
    string(
      'Canonical: the tightest lower and upper bound, or "=" one version (">=1.2.0 <2.0.0", "2.x" as ">=2.0.0 <3.0.0-0"); null: every version.',
    ),
  ),
  webhookUrl: string(),
  contact: nullable(string()),
  disabledAt: nullable(dateTime('When the endpoint answered 410 Gone; null while enabled.')),
  disabledReason: nullable(string()),
  createdAt: dateTime(),
  signingSecrets: integer(
    'How many secrets sign each webhook (2 after a rotation); the secrets are never shown again.',
  ),
};

/** A reference to a component below (a wrong name fails the contract test: its `$ref` resolves to nothing). */
const ref = (name: string): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });

/** `type` fixed to one value, and the `data` of that event. */
const fixEvent = (
  type: string,
  data: Record<string, Schema>,
  optional: readonly string[] = [],
): SchemaObject =>
  object({
    type: oneOf([type]),
    data: object({ findingId, ...data, at: dateTime() }, { optional }),
    recordedAt: dateTime('When the event was appended.'),
  });

export const OPENAPI_SCHEMAS = {
  Error: object(
    {
      statusCode: integer('The HTTP status.'),
      message: string('What is wrong, in English.'),
      error: string('The status’s reason phrase.'),
    },
    { description: 'An error answer of the REST API.' },
  ),
  OtlpStatus: object(
    {
      code: integer('google.rpc.Code (3 invalid argument, 16 unauthenticated, 14 unavailable, …).'),
      message: string(),
    },
    { description: 'google.rpc.Status, as OTLP/HTTP answers a failure (here in JSON).' },
  ),
  OtlpExportResponse: object(
    {
      partialSuccess: object(
        {
          rejectedSpans: string('Spans refused, an int64 as a decimal string (OTLP/JSON).'),
          errorMessage: string('Each problem, in English.'),
        },
        { description: 'Present when some spans were invalid; the valid ones were stored.' },
      ),
    },
    {
      optional: ['partialSuccess'],
      description: 'ExportTraceServiceResponse in OTLP/JSON: `{}` when every span was stored.',
    },
  ),
  Health: object({ status: oneOf(['ok']) }),
  Readiness: object({
    ready: boolean('The database answers and every migration is applied.'),
    store: oneOf(['postgres', 'pglite']),
    database: oneOf(
      ['reachable', 'unreachable', 'failing'],
      '`failing`: the database answers, but the checks fail (a statement timeout, for one; the log says why).',
    ),
    pendingMigrations: array(string(), 'Migrations not applied yet.'),
    setAsideRecords: nullable(
      integer('Records the projector could not apply and set aside; null when the database cannot say.'),
    ),
    projectionLagSeconds: nullable(
      integer(
        'Seconds since the first event the reports do not include yet was received (0: none); null when the database cannot say.',
      ),
    ),
    rebuilding: nullable(
      boolean(
        'A rebuild of the read models (a new rules version, or `projections rebuild`) has not yet projected the log it began with: the reports hold part of the history, and fix rounds wait. Null when the database cannot say.',
      ),
    ),
  }),

  RetryWasteGroup: object(
    {
      key: string(
        'The group: a category (`empty` for empty results), a server name (`(unknown)` without one) or `server/tool`.',
      ),
      server: nullable(
        string(
          'Grouped by server or tool: the server, to filter with; null when it did not say its name. Absent by category.',
        ),
      ),
      tool: nullable(string('Grouped by tool: the tool, to filter with. Absent by category or server.')),
      retries: integer(),
      wastedRetries: integer(),
      wastedMs,
      wastedTokens: integer('Tokens spent on wasted retries (gen_ai usage).'),
      unrecoveredChains: integer('Retry chains that never succeeded.'),
      reasons: counts(RETRY_LABELS, 'Retries per label (DOMAIN.md §2).'),
      samples: array(
        ref('RetryWasteSample'),
        `The group's latest wasted retries in the window (${RETRY_WASTE_SAMPLES} at most), newest first; empty without any.`,
      ),
    },
    { optional: ['server', 'tool'] },
  ),
  RetryWasteSample: object({
    traceId,
    spanId: string('The wasted retry: its span id (16 lowercase hex digits), to open its run timeline on.'),
    startTime: dateTime(),
    reason: oneOf(RETRY_LABELS, 'Its retry label: why it was wasted.'),
    agentName: nullable(string('gen_ai.agent.name of its run.')),
    agentId: nullable(string('gen_ai.agent.id of its run.')),
  }),
  RetryWasteReport: object({
    rulesVersion,
    totals: object({
      calls: integer(),
      retries: integer(),
      wastedRetries: integer(),
      wastedMs,
      wastedTokens: integer(),
      unrecoveredChains: integer(),
    }),
    groupCount: integer('Groups in all: `groups` is the page of them `limit` and `offset` select.'),
    limit: integer(),
    offset: integer(),
    groups: array(
      ref('RetryWasteGroup'),
      'Groups with retries or unrecovered chains, most wasted time first (then wasted retries, retries, key): the page `limit` and `offset` select.',
    ),
  }),

  EscalationCategoryRow: object({
    category: oneOf(FAILURE_CATEGORIES),
    failures: integer('Failed calls of this category.'),
    escalations: integer('Escalations attributed to calls of this category.'),
    avoidable: integer(),
    rate: nullable(number('escalations / failures (can exceed 1); null without failures.')),
  }),
  EscalationReport: object({
    rulesVersion,
    totals: object({
      failures: integer(),
      escalations: integer(),
      attributed: integer(),
      unattributed: integer(),
      avoidable: integer(),
      rate: nullable(number('escalations / failures (can exceed 1); null without failures.')),
    }),
    byCategory: array(ref('EscalationCategoryRow'), 'Every category, in report order.'),
    byTarget: counts(ESCALATION_TARGETS, 'Escalations per target.'),
  }),

  MisclassificationSample: object({
    direction: oneOf(MISCLASSIFICATION_DIRECTIONS),
    traceId,
    spanId,
    runId,
    startTime: dateTime(),
    evidence: nullable(string('What decided the classification, e.g. `empty:code:NO_TICKETS_FOUND`.')),
    text: nullable(string('The stored, redacted result text.')),
  }),
  MisclassifiedGroup: object({
    server: serverName,
    tool: string(),
    calls: integer(),
    emptyAsError: integer(),
    failureAsEmpty: integer(),
    emptyAsErrorRate: rate('emptyAsError / calls'),
    failureAsEmptyRate: rate('failureAsEmpty / calls'),
    retriesTriggered: integer('Retries of misclassified calls.'),
    escalationsTriggered: integer('Escalations attributed to misclassified calls.'),
    samples: array(
      ref('MisclassificationSample'),
      'The earliest offences of both directions, in call order.',
    ),
  }),
  MisclassifiedReport: object({
    rulesVersion,
    totals: object({ calls: integer(), emptyAsError: integer(), failureAsEmpty: integer() }),
    groupCount: integer('Groups in all: `groups` is the page of them `limit` and `offset` select.'),
    limit: integer(),
    offset: integer(),
    groups: array(
      ref('MisclassifiedGroup'),
      'Most offences first (then server and tool): the page `limit` and `offset` select.',
    ),
  }),

  SubagentCoverageReport: object({
    rulesVersion,
    reports: integer(),
    complete: integer(),
    partial: integer(),
    failed: integer(),
    meanCoverage: nullableRate('Mean completed / total of the reports carrying both', 'when none does'),
    coverageDistribution: counts(COVERAGE_BUCKETS, 'Reports per coverage bucket (percent ranges).'),
    propagationCompleteness: nullableRate(
      'Share of partial and failed reports carrying all four elements',
      'without such reports',
    ),
    missingElements: counts(PROPAGATION_ELEMENTS, 'Partial and failed reports missing each element.'),
    mostMissingElement: nullable(oneOf(PROPAGATION_ELEMENTS, 'Null when none is missing.')),
    transientFailuresInSubagents: integer(),
    absorbedTransientFailures: integer(),
    localAbsorptionRate: nullableRate(
      'absorbed / transient failures in subagent runs',
      'without such failures',
    ),
    silentPartials: integer(),
  }),

  SeriesPoint: object({
    from: dateTime('Start of the bucket (clipped to the window).'),
    to: dateTime('End of the bucket (clipped to the window).'),
    calls: integer(),
    failures: integer(),
    failureRate: nullableRate('failures / calls', 'without calls'),
    retries: integer(),
    wastedRetries: integer(),
    wastedMs,
    unrecoveredChains: integer(),
    escalations: integer(),
    avoidableEscalations: integer(),
    subagentReports: integer(),
    meanCoverage: nullableRate('Mean subagent coverage', 'without reports carrying it'),
    wastedRetriesBy: map(
      integer(),
      'Wasted retries per kept retry-waste group key (`groupBy`, `keptGroups`); groups without retries in the bucket left out.',
    ),
    wastedMsBy: map(integer(), 'Wasted milliseconds per kept retry-waste group key.'),
    foldedWastedRetries: integer(
      'Wasted retries of the groups past `keptGroups`: with `wastedRetriesBy` they add up to `wastedRetries`.',
    ),
    foldedWastedMs: integer(
      'Wasted milliseconds of the groups past `keptGroups`: with `wastedMsBy` they add up to `wastedMs`.',
    ),
  }),
  ReportSeries: object({
    rulesVersion,
    from: dateTime(),
    to: dateTime(),
    step: oneOf(['hour', 'day']),
    groupBy: oneOf(RETRY_WASTE_GROUPINGS),
    groupLimit: integer('Groups of the breakdown kept at most.'),
    keptGroups: array(
      string(),
      'The group keys the points break down by: most wasted retries over the window first, ties by key.',
    ),
    foldedGroups: integer('Groups with retries in the window past `keptGroups`, folded into `folded…`.'),
    points: array(ref('SeriesPoint'), 'One per UTC hour or day, in order.'),
  }),

  ToolScore: object({
    tool: string(),
    calls: integer(),
    failures: integer(),
    violatingCalls: integer('Calls that violate at least one rule.'),
    rules: map(integer(), 'Violating calls per finding rule; rules without any left out.'),
    grade: oneOf(GRADES, 'A none violating, B < 1 %, C < 5 %, D < 20 %, F otherwise.'),
  }),
  ServerScore: object({
    server: serverName,
    versions: array(string(), 'Server versions seen, sorted.'),
    calls: integer(),
    failures: integer(),
    violatingCalls: integer(),
    grade: oneOf(GRADES, 'Over all its calls, of every tool.'),
    toolCount: integer('Tools the server has in the window: more than `tools` lists when they were cut.'),
    tools: array(
      ref('ToolScore'),
      'Its first `toolLimit` tools: most violating calls first, then most calls, then by name.',
    ),
  }),
  ServerScorecard: object({
    rulesVersion,
    groupCount: integer('Servers in all: `servers` is the page of them `limit` and `offset` select.'),
    limit: integer(),
    offset: integer(),
    toolLimit: integer('Tools listed per server at most (`toolCount` says how many each has).'),
    toolOffset: integer('Tools of each server skipped before those listed.'),
    servers: array(
      ref('ServerScore'),
      'By name (the unnamed server first): the page `limit` and `offset` select.',
    ),
  }),

  CallNames: object({
    limit: integer('Names listed per list at most.'),
    search: nullable(
      string(
        'The `search` asked for: every list and count holds only the names that contain it, in any case. Null: every name.',
      ),
    ),
    serverCount: integer(
      'Servers with calls in the window (containing `search`, if given): `servers` lists the first `limit` of them.',
    ),
    servers: array(serverName, 'By name, the unnamed server (null) first; the first `limit` of them.'),
    toolCount: integer(
      'Tool names of the calls in the window (of `server`’s when given; containing `search`, if given): `tools` lists the first `limit` of them.',
    ),
    tools: array(string(), 'Tool names, each once, by name; the first `limit` of them.'),
    agentCount: integer(
      'Agents whose runs made calls or escalations or sent subagent reports in the window (containing `search`, if given): `agents` lists the first `limit` of them.',
    ),
    agents: array(
      string(),
      'Each agent by its name, or its id when it has none (what `agent` selects it by), each once, by name; the first `limit` of them.',
    ),
  }),

  Finding: object(findingProperties),
  FindingsPage: object({
    rulesVersion,
    total: integer('Findings matching, before paging.'),
    limit: integer(),
    offset: integer(),
    findings: array(ref('Finding'), 'Most frequent first.'),
  }),
  FindingSample: object({
    traceId,
    spanId,
    runId,
    startTime: dateTime(),
    evidence: string(),
    text: nullable(string('The stored, redacted result text.')),
  }),
  ErrorEnvelope: object(
    {
      errorCategory: oneOf(['transient', 'validation', 'business', 'permission']),
      isRetryable: boolean(),
      code: string('A stable error code.'),
      description: string(),
      customerExplanation: string('For business errors: what to tell the customer.'),
      retryAfterMs: {
        ...integer(
          'For transient errors: how long to wait before retrying, when the tool already declares it.',
        ),
        minimum: 1,
      },
    },
    {
      optional: ['customerExplanation', 'retryAfterMs'],
      description: 'What a failing tool should put in structuredContent.',
    },
  ),
  SuggestedResult: object({
    isError: boolean(),
    content: {
      ...array(object({ type: oneOf(['text']), text: string('structuredContent as JSON.') })),
      minItems: 1,
      maxItems: 1,
    },
    structuredContent: {
      oneOf: [
        ref('ErrorEnvelope'),
        object(
          { items: { type: 'array', items: {}, maxItems: 0 }, count: integer() },
          { description: 'An empty result: what empty-as-error should return instead.' },
        ),
      ],
    },
  }),
  SuggestedContract: object({
    findingId,
    rule: oneOf(FINDING_RULES),
    server: serverName,
    tool: string(),
    summary: string('One sentence: what is wrong and what to return instead.'),
    result: {
      nullable: true,
      allOf: [ref('SuggestedResult')],
      description: 'The result to return; null for missing-propagation-context.',
    },
    reportAttributes: nullable(
      object(
        {
          'errata.subagent.status': string(),
          'errata.error.category': string(),
          'errata.subagent.attempted': array(string()),
          'errata.subagent.partial_results': string(),
          'errata.subagent.alternatives': array(string()),
        },
        {
          description:
            'For missing-propagation-context: the subagent report attributes to send (placeholders in angle brackets); null otherwise.',
        },
      ),
    ),
    handler: string('A TypeScript handler for the MCP SDK.'),
    savings: object(
      { retries: integer(), wastedRetries: integer(), wastedMs, escalations: integer() },
      { description: 'What the offending calls cost in the window.' },
    ),
    markdown: string('The suggestion as Markdown, for a tracker.'),
  }),
  FindingDeliveries: object({
    pending: integer(),
    delivered: integer(),
    dead: integer(),
    disabled: integer(),
    latest: {
      nullable: true,
      allOf: [
        object({
          status: oneOf(DELIVERY_STATUSES),
          attempts: integer(),
          lastStatus: nullable(integer('HTTP status of the last attempt; null before one answered.')),
          createdAt: dateTime(),
          nextAttemptAt: NEXT_ATTEMPT_AT,
          deliveredAt: nullable(dateTime()),
        }),
      ],
      description: 'The latest webhook message; null when none was sent.',
    },
  }),
  FindingDetail: object({
    ...findingProperties,
    samples: array(ref('FindingSample'), 'The earliest offences (redacted).'),
    suggestedContract: ref('SuggestedContract'),
    fix: { nullable: true, allOf: [ref('Fix')], description: 'Null before a fix is suggested.' },
    deliveries: ref('FindingDeliveries'),
  }),

  TimelineRun: object({
    runId,
    agentName: nullable(string('gen_ai.agent.name')),
    agentId: nullable(string('gen_ai.agent.id')),
    role: nullable(oneOf(['coordinator', 'subagent'])),
    isSubagent: boolean(),
    parentRunId: nullable(string('The run it is nested in.')),
    startTime: nullable(dateTime('Its first item; null for a run with none.')),
    endTime: nullable(dateTime('The end of its last item; null for a run with none.')),
    itemCount: integer('Its calls, escalations and reports in all, on this page or not.'),
  }),
  TimelineItemPlace: object({
    traceId: string('The trace it is in: another one for a retry a hint links across traces.'),
    runId,
  }),
  TimelineCall: object({
    kind: oneOf(['call']),
    spanId,
    runId,
    startTime: dateTime(),
    endTime: dateTime(),
    durationMs: number('Milliseconds, fractional (not rounded).'),
    server: serverName,
    serverVersion: nullable(string()),
    tool: string(),
    outcome: oneOf(OUTCOMES),
    category: nullable(oneOf(FAILURE_CATEGORIES, 'Failed and empty calls’ category; null for a success.')),
    categorySource: nullable(
      oneOf(
        CATEGORY_SOURCES,
        'Where a failed call’s category came from: the server declared it, a code, the text, or nothing (`unknown`); null when the call did not fail.',
      ),
    ),
    evidence: nullable(
      string(
        'What decided the classification: the declared key and value, a code, a text rule’s id; for a hidden failure, its signal.',
      ),
    ),
    retry: nullable(
      object(
        {
          of: string('Span id of the call it retries.'),
          at: {
            nullable: true,
            allOf: [ref('TimelineItemPlace')],
            description:
              'The trace and run of the call it retries (it may be on another page, run or trace).',
          },
          label: oneOf(RETRY_LABELS),
          wasted: boolean(),
        },
        { description: 'Null when the call retries none.' },
      ),
    ),
    misclassified: nullable(oneOf(MISCLASSIFICATION_DIRECTIONS)),
    chainRecovered: nullable(boolean('Whether its retry chain recovered; null outside chains.')),
    escalationsCaused: integer(),
    findings: array(oneOf(FINDING_RULES), 'Rules the call violates.'),
    text: nullable(string('The stored, redacted result text.')),
    arguments: nullable(
      string(
        "The call's raw arguments as sent, redacted and cut, when its project stores them (off by default); else null.",
      ),
    ),
  }),
  TimelineEscalation: object({
    kind: oneOf(['escalation']),
    spanId,
    runId,
    startTime: dateTime(),
    target: oneOf(ESCALATION_TARGETS),
    attributedTo: nullable(string('Span id of the call it is attributed to; null when unattributed.')),
    attributedAt: {
      nullable: true,
      allOf: [ref('TimelineItemPlace')],
      description: 'The trace and run of that call; null when unattributed.',
    },
    category: nullable(oneOf(FAILURE_CATEGORIES)),
    avoidable: nullable(oneOf(AVOIDABLE_REASONS, 'Why it was avoidable; null when not.')),
  }),
  TimelineReport: object({
    kind: oneOf(['report']),
    spanId,
    runId,
    startTime: dateTime(),
    status: oneOf(SUBAGENT_STATUSES),
    completed: nullable(integer()),
    total: nullable(integer()),
    missingElements: array(oneOf(PROPAGATION_ELEMENTS)),
    silentPartial: boolean(),
  }),
  TraceTimeline: object({
    rulesVersion,
    traceId,
    runs: array(
      ref('TimelineRun'),
      `In the order of their first item: all of them when the trace has ${TIMELINE_RUNS_PAGE} at most; else ` +
        `${TIMELINE_RUNS_PAGE} of them, those holding the page's run or from \`runOffset\` when asked.`,
    ),
    items: array(
      { oneOf: [ref('TimelineCall'), ref('TimelineEscalation'), ref('TimelineReport')] },
      "This page's calls, escalations and subagent reports, in start order (then span id).",
    ),
    page: ref('TimelinePage'),
    runCount: integer('Runs of the trace in all, listed or not.'),
    runOffset: integer('The position of the first of `runs` among all the runs, from 0.'),
    itemCount: integer(
      "Items of the trace in all, of every run (`page.total` counts the run's, with `run`).",
    ),
  }),
  TimelinePage: object({
    limit: integer('Items per page at most.'),
    run: nullable(string('The run the items are of (`run`); null for the whole trace.')),
    total: integer('Items of the trace (of `run`) in all.'),
    offset: integer('The position of the first item of the page among them, from 0.'),
    before: nullable(
      string('Cursor: pass as `before` for the items just before this page; null at the first.'),
    ),
    after: nullable(string('Cursor: pass as `after` for the items after this page; null at the last.')),
  }),

  Owner: object(ownerProperties),
  OwnerWithSecret: object({
    ...ownerProperties,
    secret: string('The new Standard Webhooks signing secret (`whsec_…`), shown this once.'),
  }),
  Fix: object(fixProperties),
  FixEvent: {
    oneOf: [
      fixEvent('FixSuggested', {
        server: serverName,
        tool: string(),
        rule: oneOf(FINDING_RULES),
        versions: array(string()),
      }),
      fixEvent('FixDelivered', { ownerId: string() }),
      fixEvent('FixAcknowledged', { by: string() }),
      fixEvent(
        'FixVerified',
        {
          version: string(),
          calls: integer(),
          badVersions: array(
            string(),
            'Versions seen violating the rule since the suggestion (older than `version`); the fix’s badVersions gain them. Absent from verifications recorded before they were kept.',
          ),
        },
        ['badVersions'],
      ),
      fixEvent('FixRegressed', { version: string(), offences: integer() }),
    ],
  },
  FixDetail: object({ ...fixProperties, events: array(ref('FixEvent'), 'Oldest first.') }),
  Delivery: object({
    id: uuid(),
    ownerId: uuid(),
    findingId: nullable(findingId),
    msgId: string('The webhook-id header, the same on every attempt.'),
    eventType: oneOf(WEBHOOK_TYPES),
    status: oneOf(DELIVERY_STATUSES),
    attempts: integer(),
    nextAttemptAt: NEXT_ATTEMPT_AT,
    lastStatus: nullable(integer('HTTP status of the last attempt; null before one answered.')),
    lastError: nullable(string()),
    createdAt: dateTime(),
    deliveredAt: nullable(dateTime()),
  }),
} satisfies Record<string, SchemaObject>;

export type SchemaName = keyof typeof OPENAPI_SCHEMAS;

/** 200 (or `status`) with a JSON body of the named schema, or an array of them. */
export function ApiOk(
  name: SchemaName,
  options: { readonly array?: boolean; readonly status?: number; readonly description?: string } = {},
): MethodDecorator {
  return ApiResponse({
    status: options.status ?? 200,
    description: options.description ?? 'OK',
    schema: options.array === true ? { type: 'array', items: ref(name) } : ref(name),
  });
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad parameters or body, or a query parameter the endpoint does not take; the message says which.',
  401: 'No `Authorization: Bearer` key, or an unknown or revoked one.',
  403: 'A key of another scope (read endpoints need a read or admin key; fix delivery an admin key).',
  404: 'No such resource in the project.',
  409: 'The resource is not in a state that allows it (a redelivery of a message still pending); the message says why.',
  413: 'The body is over its limit.',
  503: 'Too many reads in flight and waiting (ERRATA_MAX_CONCURRENT_READS; Retry-After: 1), or the database cannot answer just now (unreachable or restarting, out of disk or memory, a statement timed out); retry after Retry-After seconds.',
};

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } };

/** The REST API's error answers, each with the `Error` body; every endpoint may answer 503 (the database). */
export function ApiErrors(...statuses: (keyof typeof ERROR_DESCRIPTIONS)[]): MethodDecorator {
  return applyDecorators(
    ...[...statuses, 503].map((status) =>
      ApiResponse({
        status,
        description: ERROR_DESCRIPTIONS[status],
        schema: ref('Error'),
        ...(status === 503 ? { headers: RETRY_AFTER } : {}),
      }),
    ),
  );
}

const OTLP_FAILURES: Record<number, string> = {
  400: 'Undecodable body: invalid protobuf or JSON, not an OTLP request, invalid gzip.',
  401: 'No `Authorization: Bearer` key, or an unknown or revoked one.',
  403: 'A read key (ingest needs an ingest or admin key).',
  408: 'The body did not arrive within ERRATA_BODY_TIMEOUT_MS.',
  413: 'The body is over ERRATA_MAX_BODY_BYTES after decompression.',
  415: 'A Content-Type other than application/x-protobuf or application/json, or a Content-Encoding other than gzip or identity (the body is then JSON).',
  503: 'Too many requests in flight, or too many bytes being decoded at once (ERRATA_MAX_DECODING_BYTES) (Retry-After: 1); the database unreachable, out of disk or memory, or a statement timed out (Retry-After: 5).',
};

const protobuf = (description: string) => ({
  'application/x-protobuf': { schema: { type: 'string', format: 'binary', description } as SchemaObject },
});

/** OTLP/HTTP's answers: the ExportTraceServiceResponse, and google.rpc.Status for failures, in the request's encoding. */
export function ApiOtlpResponses(): MethodDecorator {
  return applyDecorators(
    ApiResponse({
      status: 200,
      description: 'Stored (after the commit); `partialSuccess` when some spans were invalid.',
      content: {
        'application/json': { schema: ref('OtlpExportResponse') },
        ...protobuf('ExportTraceServiceResponse'),
      },
    }),
    ...Object.entries(OTLP_FAILURES).map(([status, description]) =>
      ApiResponse({
        status: Number(status),
        description,
        ...(status === '503' ? { headers: RETRY_AFTER } : {}),
        content: { 'application/json': { schema: ref('OtlpStatus') }, ...protobuf('google.rpc.Status') },
      }),
    ),
  );
}
