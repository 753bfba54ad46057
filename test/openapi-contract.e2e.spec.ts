/**
 * The OpenAPI document's response schemas are the contract: every operation's real answers, success and error, are
 * validated against the schema /docs-json declares for their status, with ajv in strict mode, no undeclared field
 * allowed (`additionalProperties: false` on every object schema) and every always-present field required. The data
 * is seeded so that every nullable or optional field and every array of the answers is filled at least once.
 */
import { request as httpRequest } from 'node:http';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  instrumentMcpClient,
  recordSubagentReport,
  startErrata,
  withAgentRun,
  type ErrataHandle,
} from '@errata/sdk';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectRepository } from '../apps/server/src/repositories/project.repository';
import { ApiKeyService } from '../apps/server/src/services/api-key.service';
import { DeliveryService } from '../apps/server/src/services/delivery.service';
import { FixService } from '../apps/server/src/services/fix.service';
import { AgentTrace } from './support/agent-spans';
import { Receiver } from './support/webhook-receiver';
import { connectSeedServer, playSupportScenario } from './support/seed-mcp-server';
import { withConnectionsRefused } from './support/postgres';
import { until } from './support/until';
import { sendSpans, startTestServer, type TestServer } from './support/server';

type Json = ReturnType<typeof JSON.parse>;
type SchemaNode = Record<string, unknown>;
interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        security?: Record<string, unknown>[];
        responses: Record<string, { content?: Record<string, { schema: SchemaNode }> }>;
      }
    >
  >;
  components: { schemas: Record<string, SchemaNode> };
}

const BODY_TIMEOUT_MS = 1_500;
const MAX_BODY_BYTES = 1024 * 1024;

// ---------------------------------------------------------------------------------------------------------------
// The document's schemas as ajv validators.

const COMPONENTS = 'openapi';

/**
 * OpenAPI 3.0 → JSON Schema, stricter: `$ref`s point into the registered components, `nullable` becomes a null
 * alternative, and every object schema that does not say otherwise admits no other property.
 */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const { nullable, ...schema } = node as SchemaNode;
  if (typeof schema['$ref'] === 'string') {
    return { $ref: `${COMPONENTS}#/definitions/${schema['$ref'].replace('#/components/schemas/', '')}` };
  }
  const converted: SchemaNode = {};
  for (const [key, value] of Object.entries(schema)) {
    converted[key] =
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as SchemaNode).map(([name, s]) => [name, toJsonSchema(s)]))
        : toJsonSchema(value);
  }
  if (converted['type'] === 'object' && converted['additionalProperties'] === undefined)
    converted['additionalProperties'] = false;
  if (nullable !== true) return converted;
  // An enum is taken as it is: OpenAPI 3.0's nullable does not add null to it, the document must.
  if (typeof converted['type'] === 'string') return { ...converted, type: [converted['type'], 'null'] };
  const { description, ...rest } = converted;
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] };
}

function validatorsOf(document: OpenApiDocument) {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addSchema({ $id: COMPONENTS, definitions: toJsonSchema(document.components.schemas) as SchemaNode });
  const cache = new Map<string, ValidateFunction>();
  return (schema: SchemaNode): ValidateFunction => {
    const key = JSON.stringify(schema);
    let validate = cache.get(key);
    if (validate === undefined) cache.set(key, (validate = ajv.compile(toJsonSchema(schema) as SchemaNode)));
    return validate;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Coverage: which nullable and optional fields were ever filled, which arrays ever held an item.

function resolve(document: OpenApiDocument, schema: SchemaNode): SchemaNode {
  const ref = schema['$ref'];
  return typeof ref === 'string'
    ? resolve(document, document.components.schemas[ref.replace('#/components/schemas/', '')]!)
    : schema;
}

/** Walks a valid answer along its schema, recording where a field was filled or an array was not empty. */
function cover(document: OpenApiDocument, schema: SchemaNode, data: unknown, at: string, seen: Set<string>) {
  const ref = schema['$ref'];
  if (typeof ref === 'string') at = ref.replace('#/components/schemas/', '');
  const resolved = resolve(document, schema);
  if (data === null) return;
  const alternatives = (resolved['oneOf'] ?? resolved['anyOf'] ?? resolved['allOf']) as
    SchemaNode[] | undefined;
  if (alternatives !== undefined) {
    alternatives.forEach((alternative, i) => {
      // The alternative the data is (oneOf: by its discriminating enum or required fields).
      const target = resolve(document, alternative);
      const required = (target['required'] as string[] | undefined) ?? [];
      const properties = (target['properties'] as Record<string, SchemaNode> | undefined) ?? {};
      const fits =
        typeof data === 'object' &&
        required.every((name) => name in (data as object)) &&
        Object.entries(properties).every(
          ([name, property]) =>
            !Array.isArray(property['enum']) ||
            !(name in (data as object)) ||
            (property['enum'] as unknown[]).includes((data as SchemaNode)[name]),
        );
      if (resolved['allOf'] !== undefined || fits) {
        seen.add(`${at}|${i}`);
        cover(document, alternative, data, `${at}|${i}`, seen);
      }
    });
    return;
  }
  if (Array.isArray(data)) {
    if (data.length > 0) seen.add(`${at}[]`);
    for (const item of data) cover(document, resolved['items'] as SchemaNode, item, `${at}[]`, seen);
    return;
  }
  if (typeof data !== 'object') return;
  const properties = (resolved['properties'] as Record<string, SchemaNode> | undefined) ?? {};
  for (const [name, property] of Object.entries(properties)) {
    const value = (data as SchemaNode)[name];
    if (value === undefined || value === null) continue;
    seen.add(`${at}.${name}`);
    cover(document, property, value, `${at}.${name}`, seen);
  }
  const values = resolved['additionalProperties'];
  if (values !== undefined && typeof values === 'object') {
    const entries = Object.values(data as SchemaNode);
    if (entries.length > 0) seen.add(`${at}{}`);
    for (const value of entries) cover(document, values as SchemaNode, value, `${at}{}`, seen);
  }
}

/** Every place `cover` can record in a schema: nullable or optional fields, arrays, maps and alternatives. */
function coverable(
  document: OpenApiDocument,
  schema: SchemaNode,
  at: string,
  out: Set<string>,
  path: string[] = [],
) {
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    const name = ref.replace('#/components/schemas/', '');
    if (path.includes(name)) return;
    coverable(document, document.components.schemas[name]!, name, out, [...path, name]);
    return;
  }
  const alternatives = (schema['oneOf'] ?? schema['anyOf'] ?? schema['allOf']) as SchemaNode[] | undefined;
  if (alternatives !== undefined) {
    alternatives.forEach((alternative, i) => {
      if (schema['allOf'] === undefined) out.add(`${at}|${i}`);
      coverable(document, alternative, `${at}|${i}`, out, path);
    });
    return;
  }
  if (schema['type'] === 'array') {
    if (schema['maxItems'] === 0) return; // always empty
    out.add(`${at}[]`);
    coverable(document, schema['items'] as SchemaNode, `${at}[]`, out, path);
    return;
  }
  const required = (schema['required'] as string[] | undefined) ?? [];
  for (const [name, property] of Object.entries((schema['properties'] as Record<string, SchemaNode>) ?? {})) {
    if (property['nullable'] === true || !required.includes(name)) out.add(`${at}.${name}`);
    coverable(document, property, `${at}.${name}`, out, path);
  }
  const values = schema['additionalProperties'];
  if (values !== undefined && typeof values === 'object') {
    out.add(`${at}{}`);
    coverable(document, values as SchemaNode, `${at}{}`, out, path);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The server, its data, and the answers.

/** An MCP server whose `search_orders` fails untyped in 1.0.0 and returns the suggested envelope from 1.1.0. */
function ordersServer(name: string, version: string, relapse = false): McpServer {
  const server = new McpServer({ name, version });
  const envelope = {
    errorCategory: 'transient',
    isRetryable: true,
    code: 'UPSTREAM_UNAVAILABLE',
    description: 'retry',
  };
  server.registerTool('search_orders', { description: 'search orders' }, () =>
    version === '1.0.0' || relapse
      ? { isError: true, content: [{ type: 'text' as const, text: 'upstream request failed' }] }
      : {
          isError: true,
          content: [{ type: 'text' as const, text: JSON.stringify(envelope) }],
          structuredContent: envelope,
        },
  );
  return server;
}

let server: TestServer;
let admin: string;
let errata: ErrataHandle;
let document: OpenApiDocument;
let validatorOf: (schema: SchemaNode) => ValidateFunction;
const receivers: Receiver[] = [];
/** `METHOD /path status` of every answer checked. */
const exercised = new Set<string>();
const covered = new Set<string>();

async function ordersTraffic(name: string, version: string, calls: number, relapse = false) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const mcp = ordersServer(name, version, relapse);
  await mcp.connect(serverSide);
  const client = instrumentMcpClient(new Client({ name: 'contract-agent', version: '1.0.0' }));
  await client.connect(clientSide);
  for (let i = 0; i < calls; i++)
    await client.callTool({ name: 'search_orders', arguments: { q: `order ${i}` } });
  await client.close();
  await mcp.close();
  await errata.forceFlush();
  await server.catchUp();
}

interface Answer {
  readonly status: number;
  readonly body: Json;
  readonly headers: Headers;
}

/**
 * Calls an operation and validates its answer against the schema the document declares for the status. `template`
 * is the document's path, `path` the one called (defaults to the template).
 */
async function call(
  method: string,
  template: string,
  options: {
    path?: string;
    key?: string | null;
    body?: string | Buffer;
    contentType?: string;
  } = {},
): Promise<Answer> {
  const key = options.key === undefined ? admin : options.key;
  const response = await fetch(`${server.url}${options.path ?? template}`, {
    method: method.toUpperCase(),
    headers: {
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      ...(options.contentType === undefined ? {} : { 'content-type': options.contentType }),
    },
    body: options.body,
  });
  const text = await response.text();
  return {
    ...check(method, template, response.status, response.headers.get('content-type'), text),
    headers: response.headers,
  };
}

function check(
  method: string,
  template: string,
  status: number,
  contentType: string | null,
  text: string,
): Omit<Answer, 'headers'> {
  const operation = document.paths[template]?.[method];
  expect(operation, `${method} ${template} in the document`).toBeDefined();
  const declared = operation!.responses[String(status)];
  expect(
    declared,
    `${method} ${template} declares ${status} (answered: ${text.slice(0, 300)})`,
  ).toBeDefined();
  exercised.add(`${method} ${template} ${status}`);
  if (status === 204) {
    expect(text).toBe('');
    return { status, body: null };
  }
  expect(contentType ?? '').toMatch(/^application\/json/);
  const schema = declared!.content?.['application/json']?.schema;
  expect(schema, `${method} ${template} ${status} has a JSON schema`).toBeDefined();
  const body = JSON.parse(text) as Json;
  const validate = validatorOf(schema!);
  expect(
    validate(body) ? [] : validate.errors,
    `${method} ${template} ${status}: ${JSON.stringify(body).slice(0, 500)}`,
  ).toEqual([]);
  cover(document, schema!, body, `${method} ${template} ${status}`, covered);
  return { status, body };
}

/** An OTLP upload that sends a part of its body and stalls; resolves with the answer when the server gives one. */
function stalledUpload(): { answer: Promise<{ status: number; contentType: string | null; text: string }> } {
  const answer = new Promise<{ status: number; contentType: string | null; text: string }>(
    (resolve, reject) => {
      const request = httpRequest(`${server.url}/v1/traces`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${server.ingestKey}`,
          'content-type': 'application/json',
          'content-length': '1000',
        },
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            contentType: response.headers['content-type'] ?? null,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      });
      request.on('error', reject);
      request.write('{"resourceSpans":');
    },
  );
  return { answer };
}

/** The operation's path with well-formed ids of nothing in its path parameters. */
const examplePath = (template: string): string =>
  template
    .replace('{traceId}', '0'.repeat(31) + '1')
    .replace(
      /\{(id|findingId)\}/,
      template.includes('owners') || template.includes('deliveries') ? randomUUID() : '0123456789abcdef0123',
    );

const FINDINGS_OF = (body: Json) => (body.findings as { id: string }[]).map((finding) => finding.id);

beforeAll(async () => {
  server = await startTestServer('postgres', {
    ERRATA_WEBHOOK_ALLOW_INTERNAL: 'true',
    ERRATA_WEBHOOK_RETRY_BASE_MS: '40',
    ERRATA_WEBHOOK_MAX_ATTEMPTS: '2',
    ERRATA_DELIVERY_POLL_MS: '25',
    ERRATA_FIX_INTERVAL_MS: '3600000', // rounds are run by the test
    ERRATA_FIX_MIN_CALLS: '2',
    ERRATA_MAX_CONCURRENT_INGESTS: '1',
    ERRATA_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
    ERRATA_MAX_BODY_BYTES: String(MAX_BODY_BYTES),
  });
  const project = await server.app.get(ProjectRepository).ensureProject('default');
  admin = (await server.app.get(ApiKeyService).create(project.id, 'admin', 'cli')).key;
  document = (await (await fetch(`${server.url}/docs-json`)).json()) as OpenApiDocument;
  validatorOf = validatorsOf(document);

  // The project stores arguments, and the SDK sends them: the timeline's `arguments` is filled.
  await server.app.get(ProjectRepository).setStoreArguments(project.id, true);
  errata = startErrata({
    endpoint: server.url,
    apiKey: server.ingestKey,
    instrumentMcpSdk: false,
    flushOnExit: false,
    captureArguments: true,
  });
  const seed = await connectSeedServer();
  // test/agent-reports.e2e.spec.ts's scenario, plus a failed subagent report carrying none of the four elements.
  await playSupportScenario(instrumentMcpClient(seed.client), {
    coordinatorId: 'support-1',
    afterSubagents: () =>
      withAgentRun({ name: 'archive' }, async () => recordSubagentReport({ status: 'failed' })),
  });
  await seed.close();
  await errata.forceFlush();
}, 120_000);

afterAll(async () => {
  await errata?.shutdown();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await server?.close();
});

describe('the OpenAPI document', () => {
  it('declares a JSON response schema for every success of every operation, 204 aside', () => {
    for (const [path, item] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(item)) {
        const successes = Object.keys(operation.responses).filter((status) => /^2/.test(status));
        expect(successes, `${method} ${path}`).not.toEqual([]);
        for (const status of successes)
          if (status !== '204')
            expect(
              operation.responses[status]!.content?.['application/json']?.schema,
              `${method} ${path} ${status}`,
            ).toBeDefined();
      }
  });
});

describe('answers match the schemas the document declares', () => {
  it('POST /v1/traces: OTLP/JSON uploads (fixtures, partial success) and every failure', async () => {
    const fixtures = join(__dirname, 'fixtures', 'otlp-json');
    for (const file of await readdir(fixtures)) {
      const answer = await call('post', '/v1/traces', {
        key: server.ingestKey,
        contentType: 'application/json',
        body: await readFile(join(fixtures, file)),
      });
      expect(answer.status, file).toBe(200);
    }
    const partial = await call('post', '/v1/traces', {
      key: server.ingestKey,
      contentType: 'application/json',
      body: JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: '00000000000000000000000000000000',
                    spanId: '0000000000000000',
                    name: 'bad',
                    startTimeUnixNano: '1788000000000000000',
                    endTimeUnixNano: '1788000000100000000',
                  },
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(partial.body.partialSuccess.rejectedSpans).toBe('1');

    const ingest = (options: Parameters<typeof call>[2]) => call('post', '/v1/traces', options);
    expect(
      (await ingest({ key: server.ingestKey, contentType: 'application/json', body: '{nope' })).status,
    ).toBe(400);
    expect((await ingest({ key: null, contentType: 'application/json', body: '{}' })).status).toBe(401);
    expect((await ingest({ key: server.readKey, contentType: 'application/json', body: '{}' })).status).toBe(
      403,
    );
    expect(
      (
        await ingest({
          key: server.ingestKey,
          contentType: 'application/json',
          body: Buffer.alloc(MAX_BODY_BYTES + 1, 32),
        })
      ).status,
    ).toBe(413);
    expect((await ingest({ key: server.ingestKey, contentType: 'text/plain', body: 'x' })).status).toBe(415);
    // One ingest place: a stalled upload holds it (until its body times out, 408), the next one is refused (503).
    const stalled = stalledUpload();
    await new Promise((resolve) => setTimeout(resolve, 200)); // its headers first, so that it takes the place
    await until('the stalled upload to take the place', async () => {
      const answer = await fetch(`${server.url}/v1/traces`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.ingestKey}`, 'content-type': 'application/json' },
        body: '{}',
      });
      const text = await answer.text();
      if (answer.status !== 503) return false;
      expect(answer.headers.get('retry-after')).toBe('1');
      check('post', '/v1/traces', 503, answer.headers.get('content-type'), text);
      return true;
    });
    const timedOut = await stalled.answer;
    expect(timedOut.status).toBe(408);
    check('post', '/v1/traces', 408, timedOut.contentType, timedOut.text);
  });

  it('the fix delivery endpoints, with owners that receive, fail, and answer 410', async () => {
    await errata.forceFlush();
    await server.catchUp();
    const good = new Receiver();
    const failing = new Receiver();
    failing.answers = [500, 500];
    const gone = new Receiver();
    gone.answers = [410];
    receivers.push(good, failing, gone);
    const owners = '/api/v1/owners';
    const register = async (body: object) =>
      call('post', owners, { contentType: 'application/json', body: JSON.stringify(body) });
    const owner = await register({
      server: 'orders',
      webhookUrl: await good.start(),
      contact: 'ops@example.com',
    });
    expect(owner.status).toBe(201);
    expect(
      (
        await register({
          server: 'orders-dead',
          versionRange: '>=1.0.0 <2',
          webhookUrl: await failing.start(),
        })
      ).status,
    ).toBe(201);
    const goneOwner = await register({ server: 'orders-gone', webhookUrl: await gone.start() });
    expect((await register({ server: 'orders' })).status).toBe(400);
    expect(
      (await call('post', owners, { contentType: 'application/json', body: 'x'.repeat(65 * 1024) })).status,
    ).toBe(413);

    const fixes = server.app.get(FixService);
    await ordersTraffic('orders', '1.0.0', 3);
    await ordersTraffic('orders-dead', '1.0.0', 2);
    await ordersTraffic('orders-gone', '1.0.0', 2);
    await fixes.runOnce();
    const findingId = (
      (await call('get', '/api/v1/fixes')).body as { findingId: string; server: string }[]
    ).find((fix) => fix.server === 'orders')!.findingId;
    const fixPath = (id: string) => ({ path: `/api/v1/fixes/${id}` });
    await until(
      'the fix to be delivered',
      async () =>
        (await call('get', '/api/v1/fixes/{findingId}', fixPath(findingId))).body.state === 'delivered',
    );
    expect(
      (
        await call('post', '/api/v1/findings/{id}/acknowledge', {
          path: `/api/v1/findings/${findingId}/acknowledge`,
        })
      ).status,
    ).toBe(201);
    const acknowledged = await call('get', '/api/v1/fixes/{findingId}', fixPath(findingId));
    expect(acknowledged.body).toMatchObject({ state: 'acknowledged', acknowledgedBy: 'api' });
    // Fixes by finding id, a page of them, of one state
    const listFixes = async (query: string) =>
      (await call('get', '/api/v1/fixes', { path: `/api/v1/fixes${query}` })).body as { state: string }[];
    const allFixes = await listFixes('');
    expect(allFixes.length).toBeGreaterThanOrEqual(3);
    expect(await listFixes('?limit=1&offset=1')).toEqual(allFixes.slice(1, 2));
    expect(await listFixes('?state=')).toEqual(allFixes); // empty, as every empty parameter: not given
    expect(await listFixes('?state=acknowledged')).toEqual(
      allFixes.filter((f) => f.state === 'acknowledged'),
    );
    expect(await listFixes('?state=acknowledged')).toHaveLength(1);
    const badState = await call('get', '/api/v1/fixes', { path: '/api/v1/fixes?state=done' });
    expect(badState.status).toBe(400);
    expect(badState.body.message).toMatch(/^"state" must be one of suggested, delivered, acknowledged/);
    await ordersTraffic('orders', '1.0.1', 1, true); // still violating after the suggestion: a bad version too
    await ordersTraffic('orders', '1.1.0', 2);
    expect((await fixes.runOnce()).map((event) => event.type)).toContain('FixVerified');
    await ordersTraffic('orders', '1.1.0', 1, true);
    expect((await fixes.runOnce()).map((event) => event.type)).toContain('FixRegressed');
    await until(
      'the regression to be delivered',
      async () =>
        (await call('get', '/api/v1/fixes/{findingId}', fixPath(findingId))).body.state === 'delivered',
    );
    const detail = await call('get', '/api/v1/fixes/{findingId}', fixPath(findingId));
    expect(detail.body.events.map((event: { type: string }) => event.type)).toEqual([
      'FixSuggested',
      'FixDelivered',
      'FixAcknowledged',
      'FixVerified',
      'FixRegressed',
      'FixDelivered',
    ]);

    const deliveries = '/api/v1/deliveries';
    const [dead] = await until('a dead letter', async () => {
      const answer = await call('get', deliveries, { path: `${deliveries}?status=dead` });
      return (answer.body as unknown[]).length > 0 && (answer.body as { id: string }[]);
    });
    await until('the endpoint answering 410 to be disabled', async () =>
      ((await call('get', owners)).body as { id: string; disabledAt: string | null }[]).some(
        (o) => o.id === goneOwner.body.id && o.disabledAt !== null,
      ),
    );
    expect((await call('get', owners)).status).toBe(200);
    expect((await call('get', deliveries)).status).toBe(200);
    const redeliver = '/api/v1/deliveries/{id}/redeliver';
    expect((await call('post', redeliver, { path: `/api/v1/deliveries/${dead!.id}/redeliver` })).status).toBe(
      201,
    );
    await server.app.get(DeliveryService).sendDue();
    // The disabled endpoint's message redelivered waits, pending, its next attempt due (none is made to a disabled
    // endpoint): the finding's latest message, as a read key sees it
    const [disabled] = (await call('get', deliveries, { path: `${deliveries}?status=disabled` })).body as {
      id: string;
      findingId: string;
    }[];
    expect(
      (await call('post', redeliver, { path: `/api/v1/deliveries/${disabled!.id}/redeliver` })).body,
    ).toMatchObject({ status: 'pending', nextAttemptAt: expect.any(String) });
    const waiting = await call('get', '/api/v1/findings/{id}', {
      key: server.readKey,
      path: `/api/v1/findings/${disabled!.findingId}`,
    });
    expect(waiting.body.deliveries.latest).toMatchObject({
      status: 'pending',
      nextAttemptAt: expect.any(String),
    });
    // Pending now, waiting for its endpoint: redelivering it again says how it goes out
    const again = await call('post', redeliver, { path: `/api/v1/deliveries/${disabled!.id}/redeliver` });
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(
      /is pending: it goes out once its owner's endpoint, disabled at \S+Z, is enabled again \(POST \/api\/v1\/owners\/[0-9a-f-]{36}\/enable\)$/,
    );
    const ownerPath = (id: string, action = '') => ({ path: `${owners}/${id}${action}` });
    const rotate = '/api/v1/owners/{id}/rotate-secret';
    expect(
      (await call('post', rotate, ownerPath(goneOwner.body.id, '/rotate-secret'))).body.disabledAt,
    ).not.toBeNull();
    expect(
      (await call('post', '/api/v1/owners/{id}/enable', ownerPath(goneOwner.body.id, '/enable'))).status,
    ).toBe(201);
    expect(
      (await call('post', '/api/v1/owners/{id}/rotate-secret', ownerPath(owner.body.id, '/rotate-secret')))
        .status,
    ).toBe(201);
    expect(
      (await call('get', owners)).body.some((o: { signingSecrets: number }) => o.signingSecrets === 2),
    ).toBe(true);
    expect((await call('delete', '/api/v1/owners/{id}', ownerPath(goneOwner.body.id))).status).toBe(204);

    // The POSTs that take no body refuse one too large to read, as POST /owners does.
    for (const [template, path] of [
      ['/api/v1/owners/{id}/rotate-secret', `${owners}/${owner.body.id as string}/rotate-secret`],
      ['/api/v1/owners/{id}/enable', `${owners}/${owner.body.id as string}/enable`],
      ['/api/v1/findings/{id}/acknowledge', `/api/v1/findings/${findingId}/acknowledge`],
      ['/api/v1/deliveries/{id}/redeliver', `/api/v1/deliveries/${dead!.id}/redeliver`],
    ] as const) {
      const body = JSON.stringify({ by: 'x'.repeat(65 * 1024) });
      expect((await call('post', template, { path, contentType: 'application/json', body })).status).toBe(
        413,
      );
    }

    // Bad ids and missing resources.
    const missingFinding = '0123456789abcdef0123';
    expect((await call('get', '/api/v1/fixes/{findingId}', fixPath('nope'))).status).toBe(400);
    expect((await call('get', '/api/v1/fixes/{findingId}', fixPath(missingFinding))).status).toBe(404);
    for (const [template, action] of [
      ['/api/v1/owners/{id}', ''],
      ['/api/v1/owners/{id}/rotate-secret', '/rotate-secret'],
      ['/api/v1/owners/{id}/enable', '/enable'],
    ] as const) {
      const method = action === '' ? 'delete' : 'post';
      expect((await call(method, template, ownerPath('nope', action))).status).toBe(400);
      expect((await call(method, template, ownerPath(randomUUID(), action))).status).toBe(404);
    }
    const acknowledge = '/api/v1/findings/{id}/acknowledge';
    expect((await call('post', acknowledge, { path: '/api/v1/findings/nope/acknowledge' })).status).toBe(400);
    expect(
      (await call('post', acknowledge, { path: `/api/v1/findings/${missingFinding}/acknowledge` })).status,
    ).toBe(404);
    expect((await call('get', deliveries, { path: `${deliveries}?status=bogus` })).status).toBe(400);
    // A query parameter an endpoint does not take.
    expect((await call('get', owners, { path: `${owners}?server=orders` })).status).toBe(400);
    expect((await call('get', '/api/v1/fixes', { path: '/api/v1/fixes?server=orders' })).status).toBe(400);
    expect((await call('post', redeliver, { path: '/api/v1/deliveries/nope/redeliver' })).status).toBe(400);
    expect(
      (await call('post', redeliver, { path: `/api/v1/deliveries/${randomUUID()}/redeliver` })).status,
    ).toBe(404);
  }, 60_000);

  it('the reports, findings, servers and trace timelines, and their bad parameters', async () => {
    // A trace of plain OTel spans (an agent id, a run of its own) besides the SDK's.
    const trace = new AgentTrace();
    const start = Date.now() - 60_000;
    const spans = trace.run('planner', start, [
      {
        tool: 'lookup',
        startMs: start + 1,
        durationMs: 5,
        isError: true,
        text: 'HTTP 503 upstream',
        category: 'transient',
        // declared beside the text, not in it (invisible metadata): its fix keeps the wait (retryAfterMs)
        extra: { 'errata.error.retry_after_ms': 1000 },
      },
      { tool: 'lookup', startMs: start + 10, durationMs: 5 },
    ]);
    expect(
      await sendSpans(server.url, server.ingestKey, [
        ...spans,
        ...trace.subagentHandBack('helper', start + 20),
      ]),
    ).toBe(200);
    await trace.shutdown();
    await errata.forceFlush();
    await server.catchUp();

    const read = { key: server.readKey };
    const from = new Date(Date.now() - 86_400_000).toISOString();
    for (const report of ['retry-waste', 'escalations', 'misclassified-results', 'subagent-coverage']) {
      const template = `/api/v1/reports/${report}`;
      expect((await call('get', template, read)).status).toBe(200);
      expect((await call('get', template, { ...read, path: `${template}?from=nope` })).status).toBe(400);
    }
    for (const groupBy of ['server', 'tool']) {
      const path = `/api/v1/reports/retry-waste?groupBy=${groupBy}`;
      expect((await call('get', '/api/v1/reports/retry-waste', { ...read, path })).status).toBe(200);
    }
    const series = '/api/v1/reports/timeseries';
    expect((await call('get', series, { ...read, path: `${series}?from=${from}` })).status).toBe(200);
    expect(
      (await call('get', series, { ...read, path: `${series}?from=${from}&step=day&groupBy=tool` })).status,
    ).toBe(200);
    expect((await call('get', series, read)).status).toBe(400);

    expect((await call('get', '/api/v1/servers', read)).status).toBe(200);
    expect(
      (await call('get', '/api/v1/servers', { ...read, path: '/api/v1/servers?to=2026-11-31' })).status,
    ).toBe(400);
    expect((await call('get', '/api/v1/names', read)).status).toBe(200);
    expect(
      (await call('get', '/api/v1/names', { ...read, path: '/api/v1/names?search=Server' })).status,
    ).toBe(200);
    expect((await call('get', '/api/v1/names', { ...read, path: '/api/v1/names?limit=1001' })).status).toBe(
      400,
    );
    const list = await call('get', '/api/v1/findings', { ...read, path: '/api/v1/findings?limit=500' });
    expect(
      (await call('get', '/api/v1/findings', { ...read, path: '/api/v1/findings?limit=0' })).status,
    ).toBe(400);
    const traceIds = new Set<string>([spans[0]!.spanContext().traceId]);
    for (const id of FINDINGS_OF(list.body)) {
      const detail = await call('get', '/api/v1/findings/{id}', { ...read, path: `/api/v1/findings/${id}` });
      for (const sample of detail.body.samples as { traceId: string }[]) traceIds.add(sample.traceId);
    }
    const detailPath = (id: string) => ({ ...read, path: `/api/v1/findings/${id}` });
    expect((await call('get', '/api/v1/findings/{id}', detailPath('nope'))).status).toBe(400);
    expect((await call('get', '/api/v1/findings/{id}', detailPath('0123456789abcdef0123'))).status).toBe(404);

    for (const traceId of traceIds)
      expect(
        (await call('get', '/api/v1/traces/{traceId}', { ...read, path: `/api/v1/traces/${traceId}` }))
          .status,
      ).toBe(200);
    // A page of one run's items, and the page after it: every cursor and the run filled
    const [traceId] = traceIds;
    const trace = (query: string) =>
      call('get', '/api/v1/traces/{traceId}', { ...read, path: `/api/v1/traces/${traceId}?${query}` });
    const first = (await trace('limit=1')).body as { items: { runId: string }[] };
    const runId = encodeURIComponent(first.items[0]!.runId);
    const ofRun = (await trace(`limit=1&run=${runId}`)).body as { page: { after: string | null } };
    expect(ofRun.page.after).not.toBeNull();
    expect((await trace(`limit=1&run=${runId}&after=${ofRun.page.after}`)).status).toBe(200);
    expect((await trace('after=nonsense')).status).toBe(400);
    // The runs listed from a position, and past the last
    expect((await trace('limit=1&runOffset=0')).status).toBe(200);
    expect((await trace('limit=1&runOffset=1000')).status).toBe(200);
    expect((await trace('runOffset=-1')).status).toBe(400);
    const tracePath = (id: string) => ({ ...read, path: `/api/v1/traces/${id}` });
    expect((await call('get', '/api/v1/traces/{traceId}', tracePath('nope'))).status).toBe(400);
    expect((await call('get', '/api/v1/traces/{traceId}', tracePath('0'.repeat(31) + '1'))).status).toBe(404);

    expect((await call('get', '/healthz', { key: null })).status).toBe(200);
    expect((await call('get', '/readyz', { key: null })).status).toBe(200);
  });

  it('refuses a request without a key (401) and one with a key of another scope (403), on every guarded operation', async () => {
    for (const [template, item] of Object.entries(document.paths)) {
      if (template === '/healthz' || template === '/readyz') continue;
      const path = examplePath(template);
      for (const [method, operation] of Object.entries(item)) {
        // A key of the wrong scope: an ingest key where a read key is needed, a read key elsewhere.
        const scheme = Object.keys(operation.security?.[0] ?? {})[0];
        const other = scheme === 'read-key' ? server.ingestKey : server.readKey;
        const contentType = 'application/json';
        expect((await call(method, template, { path, key: null, contentType })).status).toBe(401);
        expect((await call(method, template, { path, key: other, contentType })).status).toBe(403);
      }
    }
  });

  it('answers 503 with Retry-After on every REST operation while the database takes no connection', async () => {
    await withConnectionsRefused(server.databaseUrl!, async () => {
      for (const [template, item] of Object.entries(document.paths)) {
        if (!template.startsWith('/api/v1/')) continue;
        const from = new Date(Date.now() - 3_600_000).toISOString();
        const path = examplePath(template) + (template.endsWith('/timeseries') ? `?from=${from}` : '');
        for (const method of Object.keys(item)) {
          const body =
            method === 'post' && template === '/api/v1/owners'
              ? JSON.stringify({ server: 'orders', webhookUrl: 'http://127.0.0.1:9/hook' })
              : undefined;
          const answer = await call(method, template, { path, body, contentType: 'application/json' });
          expect(answer.status, `${method} ${template}`).toBe(503);
          expect(answer.headers.get('retry-after'), `${method} ${template}`).toBe('5');
        }
      }
    });
    await until('the database to answer again', async () => (await call('get', '/readyz')).status === 200);
  });

  it('answers /readyz with 503 and the readiness while a migration is pending', async () => {
    const { rows } = await sql<{ name: string; timestamp: string }>`
      DELETE FROM kysely_migration WHERE name = (SELECT max(name) FROM kysely_migration) RETURNING name, timestamp
    `.execute(server.db);
    try {
      const answer = await call('get', '/readyz', { key: null });
      expect(answer).toMatchObject({
        status: 503,
        body: { ready: false, pendingMigrations: [rows[0]!.name] },
      });
    } finally {
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${rows[0]!.name}, ${rows[0]!.timestamp})`.execute(
        server.db,
      );
    }
    expect((await call('get', '/readyz', { key: null })).status).toBe(200);
  });

  it('exercised every declared answer', () => {
    const declared = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        Object.keys(operation.responses).map((status) => `${method} ${path} ${status}`),
      ),
    );
    expect(declared.filter((answer) => !exercised.has(answer))).toEqual([]);
  });

  it('filled every nullable or optional field, array and map of the answers at least once', () => {
    const all = new Set<string>();
    for (const [path, item] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(item))
        for (const [status, response] of Object.entries(operation.responses)) {
          const schema = response.content?.['application/json']?.schema;
          if (schema !== undefined) coverable(document, schema, `${method} ${path} ${status}`, all);
        }
    const never = [...all].filter((place) => !covered.has(place)).sort();
    expect(never).toEqual([]);
  });
});
