import 'reflect-metadata';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ConsoleLogger, Logger, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { loadConfig, type AppConfig } from './config/app-config';
import { jsonLogLine } from './config/json-log-line';
import { listeningUrl } from './config/listening-url';
import { DATABASE, openMigratedDatabase, type Database } from './database/database';
import { ConnectionDrain } from './http/connection-drain';
import { mountDashboard } from './http/dashboard';
import { countEmbeddedStoreRequests } from './http/embedded-store-requests';
import { mountOpenApi } from './http/openapi';
import { PRIVATE_PATHS, privateAnswers } from './http/private-answers';
import { IngestActivity } from './services/ingest-activity';
import { IngestService } from './services/ingest.service';
import { KeyBootstrapService } from './services/key-bootstrap.service';

/**
 * An OTLP upload that asks `Expect: 100-continue` while every ingest place is taken gets its 503 instead of the
 * `100 Continue` Node sends by default, so it never sends the body it would be refused for.
 */
function refuseFullIngestBeforeContinue(app: NestExpressApplication): void {
  const server = app.getHttpServer() as Server;
  const ingest = app.get(IngestService);
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const traces = request.method === 'POST' && request.url?.split('?')[0] === '/v1/traces';
    if (!(traces && ingest.full)) response.writeContinue();
    server.emit('request', request, response);
  });
}

/** Starts Errata; resolves once it listens. SIGTERM/SIGINT drain in-flight requests, then close the pool. */
export async function startServer(
  config: AppConfig = loadConfig(),
  logLevels: LogLevel[] = ['log', 'warn', 'error'],
): Promise<NestExpressApplication> {
  const logger = new ConsoleLogger({
    logLevels,
    json: config.logFormat === 'json',
    colors: config.logFormat === 'text' && process.stdout.isTTY === true,
  });
  // Opened before Nest: a database that cannot be reached or migrated is said in one line, without Nest's trace.
  const opened = await openMigratedDatabase(config, (applied) =>
    logger.log(`applied ${applied.join(', ')}`, 'Migrations'),
  );
  // Nest's body parsers are off: the OTLP route reads its own body (gzip, a post-decompression limit).
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, opened), {
    bodyParser: false,
    logger,
  }).catch(async (error: unknown) => {
    await opened.destroy();
    throw error;
  });
  app.disable('x-powered-by');
  app.use(app.get(ConnectionDrain).middleware);
  app.use(PRIVATE_PATHS, privateAnswers);
  if (opened.kind === 'pglite') app.use(countEmbeddedStoreRequests(app.get(IngestActivity)));
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  mountOpenApi(app);
  mountDashboard(app);
  refuseFullIngestBeforeContinue(app);
  await app.listen(config.port, config.host);
  await app.get(KeyBootstrapService).createFirstKeys();
  const database = app.get<Database>(DATABASE);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  new Logger('Errata').log(
    `listening on ${listeningUrl(config.host, port)} (dashboard: /, OTLP/HTTP traces: POST /v1/traces) — store: ${database.description}`,
  );
  return app;
}

if (require.main === module) {
  startServer().catch((error: unknown) => {
    const message = `Errata failed to start: ${error instanceof Error ? error.message : String(error)}`;
    // Read here, not from the config: the failure may be the config's.
    const json = process.env['ERRATA_LOG_FORMAT']?.trim().toLowerCase() === 'json';
    process.stderr.write(json ? jsonLogLine('error', 'Errata', message) : `${message}\n`);
    process.exit(1);
  });
}
