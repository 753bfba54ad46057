import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { detectCallFindings } from './call-findings';
import { classifyToolCall, isEmptyListPayload } from './classify';
import { errataToolSpan, toolCallOf } from './fixtures.spec-helper';
import { findingId, type Finding } from './findings-report';
import { declaredErrorOfCall } from './result-signals';
import { FINDING_RULES, type Category, type FindingRule } from './rules';
import { markdownCode, suggestContract } from './suggested-contract';

const finding = (rule: FindingRule, evidence: Record<string, number>, tool = 'search_orders'): Finding => ({
  id: findingId('orders', tool, rule),
  server: 'orders',
  tool,
  rule,
  count: 12,
  rate: 0.25,
  firstSeen: '2026-11-29T10:00:00.000Z',
  lastSeen: '2026-11-30T09:00:00.000Z',
  serverVersions: ['1.4.0'],
  evidence,
  retriesCaused: 9,
  wastedRetries: 7,
  wastedMs: 4_200,
  escalationsCaused: 2,
  samples: [],
});

const EVIDENCE: Record<FindingRule, Record<string, number>> = {
  'untyped-error': { 'source:text': 12 },
  'empty-as-error': { 'empty:code:NO_ORDERS_FOUND': 12 },
  'failure-as-empty': { 'failure:ok_false': 12 },
  'invisible-metadata': { 'structured:not_mirrored': 12 },
  'retryable-mismatch': { 'declared_retryable:business': 12 },
  'wrong-channel': { 'jsonrpc:-32603': 12 },
  'leaky-error': { stack_trace: 12 },
  'raw-exception': { raw_exception: 12 },
  'missing-propagation-context': { 'missing:attempted,alternatives': 12 },
};

/** The suggested result, as the Errata SDK would report it, classified by Errata's own rules. */
function classifiedFix(
  rule: FindingRule,
  dominantCategory: Category | null = null,
  evidence: Record<string, number> = EVIDENCE[rule],
) {
  const contract = suggestContract(finding(rule, evidence), { dominantCategory });
  const result = contract.result!;
  const call = toolCallOf(
    errataToolSpan(
      'search_orders',
      { isError: result.isError, content: [...result.content], structuredContent: result.structuredContent },
      // what the Errata SDK reports for this result: empty when it is an empty list
      { empty: !result.isError && isEmptyListPayload(result.structuredContent) },
    ),
  );
  const classification = classifyToolCall(call);
  return { contract, call, classification, findings: detectCallFindings(call, classification) };
}

describe('suggestContract', () => {
  it.each(FINDING_RULES.filter((rule) => rule !== 'missing-propagation-context'))(
    'given a %s finding, the suggested result violates no rule when Errata classifies it',
    (rule) => {
      const { classification, findings } = classifiedFix(rule, 'validation');
      expect(findings).toEqual([]);
      expect(classification.emptyAsError).toBe(false);
      expect(classification.failureAsEmpty).toBe(false);
    },
  );

  it('given an untyped error of a tool that mostly fails on validation, declares validation, retryable after correction', () => {
    const { contract, classification } = classifiedFix('untyped-error', 'validation');
    expect(contract.result!.structuredContent).toEqual({
      errorCategory: 'validation',
      isRetryable: true,
      code: 'INVALID_ARGUMENTS',
      description: expect.stringContaining('search_orders') as string,
    });
    expect(classification).toMatchObject({ failed: true, category: 'validation', source: 'declared' });
    expect(JSON.parse(contract.result!.content[0].text)).toEqual(contract.result!.structuredContent);
  });

  it('given a failure reported as success, whose tool has no failure category, declares what its texts say', () => {
    const sampled = (text: string): Finding => ({
      ...finding('failure-as-empty', EVIDENCE['failure-as-empty'], 'get_account_notes'),
      samples: [
        {
          traceId: '0'.repeat(31) + '1',
          spanId: '0'.repeat(15) + '1',
          runId: 'trace:' + '0'.repeat(31) + '1',
          startTime: '2026-11-30T09:00:00.000Z',
          evidence: 'failure:text_error',
          text,
        },
      ],
    });
    // Seed 000, question 4: a permission error, structured, with no automatic retry.
    expect(
      suggestContract(sampled('ERROR: Permission denied'), { dominantCategory: null }).result!
        .structuredContent,
    ).toMatchObject({ errorCategory: 'permission', isRetryable: false });
    // Nothing to go on: transient, as before.
    expect(
      suggestContract(sampled('Operation failed'), { dominantCategory: null }).result!.structuredContent,
    ).toMatchObject({ errorCategory: 'transient' });
  });

  it('given a business error, the envelope carries a customer-facing explanation and is not retryable', () => {
    const { contract, classification } = classifiedFix('retryable-mismatch');
    expect(contract.result!.structuredContent).toMatchObject({
      errorCategory: 'business',
      isRetryable: false,
      customerExplanation: expect.any(String) as string,
    });
    expect(classification.customerExplanation).toBe(true);
  });

  it('given a failure declared not retryable that succeeded when retried unchanged, the fix declares it transient and retryable', () => {
    // Whatever the tool's failures usually are: the same call succeeding shows this one was transient.
    const { contract, classification, findings } = classifiedFix('retryable-mismatch', 'validation', {
      'declared_not_retryable:retry_succeeded': 12,
    });
    expect(contract.result!.structuredContent).toMatchObject({
      errorCategory: 'transient',
      isRetryable: true,
      code: 'UPSTREAM_UNAVAILABLE',
    });
    expect(contract.summary).toBe(
      'orders/search_orders declares a failure not retryable that succeeded when retried with the same arguments: ' +
        'set isRetryable true.',
    );
    expect(contract.markdown).toContain('set isRetryable true.');
    expect(classification).toMatchObject({
      category: 'transient',
      retryable: true,
      retryableSource: 'declared',
    });
    expect(findings).toEqual([]);
  });

  it('given a retryable-mismatch with both kinds of evidence, the business evidence decides the envelope and the summary says both', () => {
    const contract = suggestContract(
      finding('retryable-mismatch', {
        'declared_not_retryable:retry_succeeded': 7,
        'declared_retryable:business': 5,
      }),
      { dominantCategory: 'transient' },
    );
    expect(contract.result!.structuredContent).toMatchObject({
      errorCategory: 'business',
      isRetryable: false,
    });
    expect(contract.summary).toBe(
      'orders/search_orders declares some failures retryable that can never succeed on retry, and others not ' +
        'retryable that succeeded when retried with the same arguments: set isRetryable false on business and ' +
        'permission failures, true on transient ones.',
    );
    // The category case alone keeps its summary.
    expect(
      suggestContract(finding('retryable-mismatch', EVIDENCE['retryable-mismatch']), {
        dominantCategory: null,
      }).summary,
    ).toBe(
      'orders/search_orders declares a failure retryable that can never succeed on retry: set isRetryable false.',
    );
  });

  it('given empty-as-error, the fix is a successful empty result, and keeps the code the tool already used', () => {
    const { call } = classifiedFix('empty-as-error');
    expect(call.outcome).toBe('ok_empty');
    const untyped = suggestContract(finding('untyped-error', { 'empty:code:NO_ORDERS_FOUND': 1 }), {
      dominantCategory: null,
    });
    expect(untyped.result!.structuredContent).toMatchObject({
      code: 'NO_ORDERS_FOUND',
      errorCategory: 'transient',
    });
  });

  it('given a retryable business error with a code of its own, the fix corrects the retryability and keeps the code', () => {
    const text = JSON.stringify({
      errorCategory: 'business',
      isRetryable: true,
      code: 'REFUND_LIMIT',
      description: 'Refunds above 500 EUR need approval.',
    });
    const sample = {
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      runId: 'run-1',
      startTime: '2026-11-30T09:00:00.000Z',
      evidence: 'declared_retryable:business',
      text,
    };
    const mismatch = { ...finding('retryable-mismatch', EVIDENCE['retryable-mismatch']), samples: [sample] };
    expect(
      suggestContract(mismatch, { dominantCategory: 'business' }).result!.structuredContent,
    ).toMatchObject({
      errorCategory: 'business',
      isRetryable: false,
      code: 'REFUND_LIMIT',
    });
    // A sample that declares no code, or a number as one, leaves the category's code.
    const numbered = {
      ...mismatch,
      samples: [{ ...sample, text: '{"errorCategory":"business","code":500}' }],
    };
    expect(
      suggestContract(numbered, { dominantCategory: 'business' }).result!.structuredContent,
    ).toMatchObject({
      code: 'POLICY_VIOLATION',
    });
  });

  it('given invisible metadata, keeps the code and the wait the tool declared only in structuredContent', () => {
    // The repro's get_quote: a bare text, its metadata only in structuredContent (no errata.error.* attributes)
    const call = toolCallOf(
      errataToolSpan('get_quote', {
        isError: true,
        content: [{ type: 'text', text: 'Something went wrong' }],
        structuredContent: {
          errorCategory: 'rate_limited',
          isRetryable: true,
          code: 'QUOTA',
          retryAfterMs: 1000,
        },
      }),
    );
    const classification = classifyToolCall(call);
    const found = detectCallFindings(call, classification).find((f) => f.rule === 'invisible-metadata')!;
    const sample = {
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      runId: 'run-1',
      startTime: '2026-11-30T09:00:00.000Z',
      evidence: found.evidence,
      text: call.result.text, // what the read models keep of the call: not the code
    };
    const invisible = {
      ...finding('invisible-metadata', { [found.evidence]: 1 }, 'get_quote'),
      samples: [sample],
    };

    const contract = suggestContract(invisible, {
      dominantCategory: classification.category,
      sampledDeclarations: [declaredErrorOfCall(call)],
    });

    const suggested = contract.result!;
    expect(suggested.structuredContent).toEqual({
      errorCategory: 'transient',
      isRetryable: true,
      code: 'QUOTA',
      description: expect.stringContaining('get_quote') as string,
      retryAfterMs: 1000,
    });
    // Errata reads the suggested result as it says: the wait, and no rule violated
    const fixed = toolCallOf(errataToolSpan('get_quote', { ...suggested, content: [...suggested.content] }));
    const fixedClassification = classifyToolCall(fixed);
    expect(fixedClassification).toMatchObject({ category: 'transient', retryAfterMs: 1000 });
    expect(detectCallFindings(fixed, fixedClassification)).toEqual([]);
    // A wait on a failure no retry fixes is not suggested; the code still is the tool's own
    const business = suggestContract(invisible, {
      dominantCategory: 'business',
      sampledDeclarations: [declaredErrorOfCall(call)],
    }).result!.structuredContent;
    expect(business).toMatchObject({ errorCategory: 'business', code: 'QUOTA' });
    expect(business).not.toHaveProperty('retryAfterMs');
  });

  it('reads what a call declared from its errata.error.* attributes first, then its structured content and text', () => {
    const call = toolCallOf(
      errataToolSpan(
        'get_quote',
        {
          isError: true,
          content: [{ type: 'text', text: '{"code":"FROM_TEXT","retryAfterSeconds":3}' }],
          structuredContent: { errorCategory: 'transient', code: 'FROM_STRUCTURED' },
        },
        { attributes: { 'errata.error.code': 'FROM_ATTRIBUTE' } },
      ),
    );
    expect(declaredErrorOfCall(call)).toEqual({
      category: 'transient',
      retryable: null,
      code: 'FROM_ATTRIBUTE',
      retryAfterMs: 3000,
    });
  });

  it('given missing propagation context, suggests the four report elements instead of a tool result', () => {
    const contract = suggestContract(
      finding('missing-propagation-context', EVIDENCE['missing-propagation-context'], 'researcher'),
      {
        dominantCategory: null,
      },
    );
    expect(contract.result).toBeNull();
    expect(Object.keys(contract.reportAttributes!)).toEqual([
      'errata.subagent.status',
      'errata.error.category',
      'errata.subagent.attempted',
      'errata.subagent.partial_results',
      'errata.subagent.alternatives',
    ]);
  });

  it('renders Markdown with the evidence, the cost and the result to return', () => {
    const { contract } = classifiedFix('untyped-error', 'transient');
    expect(contract.savings).toEqual({ retries: 9, wastedRetries: 7, wastedMs: 4_200, escalations: 2 });
    expect(contract.markdown).toContain('## untyped-error: `orders` / `search_orders`');
    expect(contract.markdown).toContain('Seen 12 times (25.0 % of calls)');
    expect(contract.markdown).toContain('9 retries (7 wasted, 4200 ms), 2 escalations');
    expect(contract.markdown).toContain('"errorCategory": "transient"');
    expect(contract.markdown).toContain('server.registerTool("search_orders"');
  });

  /** Tool and server names a server may choose: quotes, an HTML entity, markup, backticks, a line break. */
  const HOSTILE_NAMES = [
    `search_"quoted"&amp;'s`,
    '<script>alert(1)</script>',
    'a`b``c',
    '`<img src=x onerror=alert(1)>`',
    "it's\\'\n</script>\u2028",
    '```\n<b>fence</b>',
  ];

  /** The syntax errors TypeScript finds in `code` (none: it parses). */
  const syntaxErrors = (code: string): string[] =>
    (ts.transpileModule(code, { reportDiagnostics: true }).diagnostics ?? []).map((diagnostic) =>
      ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
    );

  it.each(HOSTILE_NAMES)(
    'given a tool named %j, the handler is valid TypeScript registering exactly that name',
    (tool) => {
      for (const rule of ['untyped-error', 'empty-as-error'] as const) {
        const contract = suggestContract(finding(rule, EVIDENCE[rule], tool), { dominantCategory: null });
        expect(syntaxErrors(contract.handler)).toEqual([]);
        const registered: unknown[] = [];
        // Run what registers the tool, to read back the name it registers.
        new Function('server', 'description', 'inputSchema', contract.handler)(
          { registerTool: (name: unknown) => registered.push(name) },
          '',
          {},
        );
        expect(registered).toEqual([tool]);
      }
    },
  );

  /** Markdown outside code spans and fenced blocks (CommonMark): what a tracker would render as text or HTML. */
  function outsideCode(markdown: string): string {
    const withoutFences = markdown.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '');
    return withoutFences.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, '');
  }

  it.each(HOSTILE_NAMES)(
    'given a server and tool named %j, the Markdown shows the names as code, never as HTML',
    (name) => {
      const hostile = { ...finding('leaky-error', EVIDENCE['leaky-error'], name), server: name };
      const { markdown } = suggestContract(hostile, { dominantCategory: null });
      expect(outsideCode(markdown)).not.toMatch(/[<>]/);
      const heading = markdown.split('\n')[0]!;
      expect(heading.startsWith('## leaky-error: `')).toBe(true);
      expect(markdown.split('\n')[2]).toMatch(/^`+ ?[^\n]*`+ leaks internals/);
    },
  );

  it('renders a name with backticks as a code span only a longer run of backticks closes', () => {
    expect(markdownCode('search_orders')).toBe('`search_orders`');
    expect(markdownCode('a`b``c')).toBe('```a`b``c```');
    expect(markdownCode('`tick')).toBe('`` `tick ``');
    expect(markdownCode('two\nlines')).toBe('`two lines`');
  });

  it('writes the control and bidi characters of names and versions as escapes, in its lines and its code blocks', () => {
    const hostile = {
      ...finding('leaky-error', EVIDENCE['leaky-error'], 'tool\u001b[31mRED\u001b[0m\u202e'),
      server: 'ctl\u001b]0;OWNED-TITLE\u0007\u001b[2J\u0085',
      serverVersions: ['1.0\u001b[2J\u0007\u202e', '2.0\u2066'],
    };
    const { markdown } = suggestContract(hostile, { dominantCategory: null });
    // Line breaks are its own; nothing else a terminal or a bidi algorithm acts on is left raw.
    expect(markdown).not.toMatch(
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/,
    );
    expect(markdown).toContain('- Server versions: `1.0\\u001b[2J\\u0007\\u202e`, `2.0\\u2066`');
    expect(markdown.split('\n')[0]).toBe(
      '## leaky-error: `ctl\\u001b]0;OWNED-TITLE\\u0007\\u001b[2J\\u0085` / `tool\\u001b[31mRED\\u001b[0m\\u202e`',
    );
    // In the handler the name is a string literal: the escape names the same tool.
    expect(markdown).toContain('server.registerTool("tool\\u001b[31mRED\\u001b[0m\\u202e"');
  });
});
