import type { NestExpressApplication } from '@nestjs/platform-express';
import { applyDecorators, SetMetadata } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiQuery,
  DocumentBuilder,
  SwaggerModule,
  type ApiQueryOptions,
} from '@nestjs/swagger';
import { join } from 'node:path';
import type { NextFunction, Request, Response } from 'express';
import { serveCodedFiles } from './coded-files';
import { DASHBOARD_DIR } from './dashboard';
import { DEFAULT_LIMIT, MAX_LIMIT } from './findings-page';
import { OPENAPI_SCHEMAS } from './openapi-schemas';

/** The Swagger UI's files /docs loads, with their brotli and gzip files, as `npm run build` writes them. */
export const SWAGGER_UI_DIR = join(DASHBOARD_DIR, 'swagger-ui');

/** Where `QueryParameter` lists a route's query parameters, for `DocumentedQueryOnly`. */
export const QUERY_PARAMETERS = 'errata:query-parameters';

/**
 * A query parameter a route takes: documented in the OpenAPI document, and the only names `DocumentedQueryOnly`
 * lets through, so the parameters documented and the ones accepted are one list.
 */
export function QueryParameter(options: ApiQueryOptions & { readonly name: string }): MethodDecorator {
  return (target, key, descriptor) => {
    const handler = descriptor.value as object;
    const names = (Reflect.getMetadata(QUERY_PARAMETERS, handler) as string[] | undefined) ?? [];
    SetMetadata(QUERY_PARAMETERS, [...names, options.name])(target, key, descriptor);
    return ApiQuery(options)(target, key, descriptor);
  };
}

const textParameter = (name: string, description: string, required = false) =>
  QueryParameter({ name, required, description, schema: { type: 'string' } });

/**
 * A report's window, `from` and `to`: without them, the whole history (DOMAIN.md §8 names no default window). A series
 * needs `from`, and its `to` defaults to now: it has a point per bucket, so it needs an end.
 */
export function ApiWindow(options: { readonly fromRequired?: boolean } = {}): MethodDecorator {
  // No `format: date-time`: a date alone (UTC midnight) and a date-time without an offset (UTC) are taken too.
  const instant =
    'ISO-8601: a date (2026-11-30) or a date-time (2026-11-30T12:00:00Z, 2026-11-30T17:30:00+05:30), UTC without an offset (which may be in hours alone, +05), to the millisecond at most; an offset’s `+` may be left unescaped, though a query string reads it as a space';
  const series = options.fromRequired === true;
  return applyDecorators(
    textParameter(
      'from',
      `Start of the window, inclusive, on each record’s start time. ${instant}.` +
        (series ? '' : ' Without it, the window starts with the earliest record.'),
      series,
    ),
    textParameter(
      'to',
      `End of the window, exclusive. ${instant}.` +
        (series
          ? ' Defaults to now.'
          : ' Without it, the window has no end (records dated later than now included).'),
    ),
  );
}

/** The report filters of DOMAIN.md §8, as OpenAPI query parameters; a series needs `from`. */
export function ApiReportFilters(options: { readonly fromRequired?: boolean } = {}): MethodDecorator {
  return applyDecorators(
    ApiWindow(options),
    textParameter(
      'server',
      'MCP server name (serverInfo.name); selects tool calls. `(unknown)` selects the calls whose server did not say its name.',
    ),
    textParameter('tool', 'Tool name; selects tool calls.'),
    textParameter('agent', 'Agent run name or id (gen_ai.agent.name / gen_ai.agent.id).'),
  );
}

/** `limit` and `offset` of a grouped report (`withGroupPage`), as the findings list takes them. */
export function ApiGroupPage(): MethodDecorator {
  return applyDecorators(
    QueryParameter({
      name: 'limit',
      required: false,
      description: 'Groups to answer, in the report order; `groupCount` says how many there are in all.',
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    }),
    QueryParameter({
      name: 'offset',
      required: false,
      description: 'Groups to skip first.',
      schema: { type: 'integer', minimum: 0, default: 0 },
    }),
  );
}

/** A list's `limit` (1 to MAX_LIMIT, `defaultLimit` when not given) and `offset` (`parseLimitOffset` reads them). */
export function ApiListPage(defaultLimit: number): MethodDecorator {
  return applyDecorators(
    QueryParameter({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: defaultLimit },
    }),
    QueryParameter({ name: 'offset', required: false, schema: { type: 'integer', minimum: 0, default: 0 } }),
  );
}

/** Read endpoints: a project read (or admin) key as a bearer token. */
export const ApiReadKey = (): ClassDecorator & MethodDecorator => ApiBearerAuth('read-key');

/** Fix delivery's endpoints: a project admin key as a bearer token. */
export const ApiAdminKey = (): ClassDecorator & MethodDecorator => ApiBearerAuth('admin-key');

/** OTLP ingest: a project ingest key as a bearer token. */
export const ApiIngestKey = (): ClassDecorator & MethodDecorator => ApiBearerAuth('ingest-key');

/** Errata's keys are opaque strings (`errata_read_…`), not JWTs, which Nest's default bearerFormat says. */
const OPAQUE_BEARER = { type: 'http', scheme: 'bearer', bearerFormat: 'opaque key' } as const;

/** `/docs` (Swagger UI) and `/docs-json` (the OpenAPI document) for the REST API. */
export function mountOpenApi(app: NestExpressApplication): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Errata REST API')
      .setDescription(
        'Reports over MCP tool-call telemetry (retry waste, misclassified results, escalations, subagent coverage), ' +
          'error-contract findings and server scorecards. Every figure is derived under the versioned rules (`rulesVersion`).',
      )
      .setVersion('v1')
      .addBearerAuth({ ...OPAQUE_BEARER, description: 'A project read or admin key.' }, 'read-key')
      .addBearerAuth({ ...OPAQUE_BEARER, description: 'A project admin key.' }, 'admin-key')
      .addBearerAuth({ ...OPAQUE_BEARER, description: 'A project ingest (or admin) key.' }, 'ingest-key')
      .build(),
  );
  // The response bodies the controllers reference (`ApiOk`, `ApiErrors`).
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...OPENAPI_SCHEMAS },
  };
  // Users paste a key into the Swagger UI's Authorize dialog: no other site may frame it.
  app.use(['/docs', '/docs-json'], (_req: Request, res: Response, next: NextFunction) => {
    res.set({ 'content-security-policy': "frame-ancestors 'none'", 'x-frame-options': 'DENY' });
    next();
  });
  app.use('/docs', docsPageAtItsOwnUrl);
  // Its script and stylesheets compressed at build (2.0 MB as they are, 0.47 MB in brotli): in front of swagger-ui-dist,
  // which @nestjs/swagger streams as they are, and which still serves its other files (and these, unbuilt).
  serveCodedFiles(app, '/docs/', SWAGGER_UI_DIR, {
    setHeaders: (res) => res.setHeader('x-content-type-options', 'nosniff'),
  });
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
}

/**
 * Nest's Swagger UI page names its scripts relative to its URL, and takes any URL not ending in "/" for `/docs`: at
 * `/docs/?url=…` (an old link, or someone trying to load another spec) or `/docs/index.html` it asks for
 * /docs/docs/… and stays blank. Those go to `/docs/` with the query dropped (a relative Location keeps a path prefix a
 * proxy puts in front of the service). The page shows Errata's own document whatever the URL says: the document is
 * embedded in it, and the Swagger UI loads no spec the URL names.
 */
function docsPageAtItsOwnUrl(req: Request, res: Response, next: NextFunction): void {
  const path = req.originalUrl.split('?', 1)[0];
  const page = path === '/docs/' || path === '/docs/index.html';
  if (page && !req.originalUrl.endsWith('/') && (req.method === 'GET' || req.method === 'HEAD'))
    return res.redirect(302, './');
  next();
}
