import 'reflect-metadata';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ConsoleLogger, Logger, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { loadConfig, type AppConfig } from './config/app-config';
import { listeningUrl } from './config/listening-url';
import { UtcConsoleLogger } from './config/utc-console-logger';
import { DATABASE, openMigratedDatabase, type Database } from './database/database';
import { COMPRESSED_PATHS, compressAnswers } from './http/compressed-answers';
import { ConnectionDrain } from './http/connection-drain';
import { mountDashboard } from './http/dashboard';
import { countEmbeddedStoreRequests } from './http/embedded-store-requests';
import { mountOpenApi } from './http/openapi';
import { PRIVATE_PATHS, privateAnswers } from './http/private-answers';
import { discardBound } from './http/read-request-body';
import { STOP_SIGNALS, StartupSignals, StoppedDuringStartup } from './http/startup-signals';
import { boundUnreadBodies } from './http/unread-body';
import { checkKey } from './http/api-key.guard';
import { ApiKeyService } from './services/api-key.service';
import { IngestActivity } from './services/ingest-activity';
import { IngestService } from './services/ingest.service';
import { KeyBootstrapService } from './services/key-bootstrap.service';

/**
 * An OTLP upload that asks `Expect: 100-continue` gets its refusal instead of the `100 Continue` Node sends by
 * default, so it never sends the body it would be refused for: a 503 while every ingest place is taken, a 401/403 when
 * its key would not be let in (the guard's own check, whose lookup the guard then finds cached).
 */
function refuseBeforeContinue(app: NestExpressApplication): void {
  const server = app.getHttpServer() as Server;
  const ingest = app.get(IngestService);
  const keys = app.get(ApiKeyService);
  const welcome = async (request: IncomingMessage): Promise<boolean> => {
    const traces = request.method === 'POST' && request.url?.split('?')[0] === '/v1/traces';
    if (!traces) return true;
    if (ingest.full) return false;
    const checked = await checkKey(keys, request.headers.authorization, 'ingest');
    return 'principal' in checked;
  };
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    // A lookup that fails (the database down) invites no body either: the route answers the failure.
    void welcome(request)
      .catch(() => false)
      .then((welcomed) => {
        if (welcomed) response.writeContinue();
        server.emit('request', request, response);
      });
  });
}

/**
 * Starts Errata; resolves once it listens. A stop signal (SIGTERM, SIGINT, SIGHUP) drains in-flight requests, then
 * closes the pool; one during startup stops it there (StoppedDuringStartup), once what was opened is closed.
 * `signals`: those heard since before this module loaded (main.ts); by default from now on.
 */
export async function startServer(
  config: AppConfig = loadConfig(),
  logLevels: LogLevel[] = ['log', 'warn', 'error'],
  signals: StartupSignals = new StartupSignals(),
): Promise<NestExpressApplication> {
  const logger = new UtcConsoleLogger({
    logLevels,
    json: config.logFormat === 'json',
    colors: config.logFormat === 'text' && process.stdout.isTTY === true,
  });
  // Before the store opens: a first start on PGlite spends seconds there, and a stop meanwhile is said and done.
  signals.sayWith(logger);
  try {
    return await start(config, logger, signals);
  } finally {
    signals.remove();
  }
}

async function start(
  config: AppConfig,
  logger: ConsoleLogger,
  signals: StartupSignals,
): Promise<NestExpressApplication> {
  // A stop while the modules loaded (main.ts): there is nothing to close.
  const whileLoading = await signals.received();
  if (whileLoading !== null) {
    logger.log('stopped', 'Errata');
    throw new StoppedDuringStartup(whileLoading);
  }
  // Opened before Nest: a database that cannot be reached or migrated is said in one line, without Nest's trace.
  const opened = await openMigratedDatabase(
    config,
    (applied) => logger.log(`applied ${applied.join(', ')}`, 'Migrations'),
    'server',
    (line) => logger.log(line, 'Database'),
  );
  const stopBeforeNest = async (signal: NodeJS.Signals): Promise<never> => {
    await opened.destroy();
    logger.log('stopped', 'Errata');
    throw new StoppedDuringStartup(signal);
  };
  const beforeNest = await signals.received();
  if (beforeNest !== null) return stopBeforeNest(beforeNest);
  // Nest's body parsers are off: the OTLP route reads its own body (gzip, a post-decompression limit).
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, opened), {
    bodyParser: false,
    logger,
  }).catch(async (error: unknown) => {
    await opened.destroy();
    throw error;
  });
  // Nothing of the app runs before init: closing the store is all there is to stop.
  const duringCreate = await signals.received();
  if (duringCreate !== null) return stopBeforeNest(duringCreate);
  /** From init on, the app's shutdown hooks stop what runs (the pollers, the listening server) and say `stopped`. */
  const stopIfAsked = async (): Promise<void> => {
    const signal = await signals.received();
    if (signal === null) return;
    app.get(ConnectionDrain).stopAlreadySaid();
    await app.close();
    throw new StoppedDuringStartup(signal);
  };
  app.disable('x-powered-by');
  app.use(app.get(ConnectionDrain).middleware);
  // No route takes more than ERRATA_MAX_BODY_BYTES.
  app.use(boundUnreadBodies(discardBound(config.maxBodyBytes)));
  app.use(PRIVATE_PATHS, privateAnswers);
  app.use(COMPRESSED_PATHS, compressAnswers);
  if (opened.kind === 'pglite') app.use(countEmbeddedStoreRequests(app.get(IngestActivity)));
  mountOpenApi(app);
  mountDashboard(app);
  refuseBeforeContinue(app);
  await app.init();
  await stopIfAsked();
  await app.listen(config.port, config.host);
  // Not once stopping began: keys printed by a start that then stops would be easy to miss, and are made next time.
  await stopIfAsked();
  await app.get(KeyBootstrapService).createFirstKeys();
  await stopIfAsked();
  const database = app.get<Database>(DATABASE);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  new Logger('Errata').log(
    `listening on ${listeningUrl(config.host, port)} (dashboard: /, OTLP/HTTP traces: POST /v1/traces) — store: ${database.description}`,
  );
  // Nest's hooks take over from StartupSignals (removed as this returns, with no event in between).
  app.enableShutdownHooks([...STOP_SIGNALS]);
  return app;
}
