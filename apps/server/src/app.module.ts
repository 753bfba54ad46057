import { Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { APP_CONFIG, type AppConfig } from './config/app-config';
import { DatabaseExceptionFilter } from './http/database-exception.filter';
import { FindingsController } from './controllers/findings.controller';
import { HealthController } from './controllers/health.controller';
import { McpController } from './controllers/mcp.controller';
import { OwnersController } from './controllers/owners.controller';
import { OtlpIngestController } from './controllers/otlp-ingest.controller';
import { ReportsController } from './controllers/reports.controller';
import { TracesController } from './controllers/traces.controller';
import { DATABASE, type Database } from './database/database';
import { ConnectionDrain } from './http/connection-drain';
import { ApiKeyGuard } from './http/api-key.guard';
import { CheckpointRepository } from './repositories/checkpoint.repository';
import { EventRepository } from './repositories/event.repository';
import { ProjectRepository } from './repositories/project.repository';
import { ReadModelRepository } from './repositories/read-model.repository';
import { DeliveryRepository } from './repositories/delivery.repository';
import { FixRepository } from './repositories/fix.repository';
import { OwnerRepository } from './repositories/owner.repository';
import { RollupQueryRepository } from './repositories/rollup-query.repository';
import { RollupRepository } from './repositories/rollup.repository';
import { StatisticsRepository } from './repositories/statistics.repository';
import { TraceItemsRepository } from './repositories/trace-items.repository';
import { ApiKeyService } from './services/api-key.service';
import { HealthService } from './services/health.service';
import { IngestActivity } from './services/ingest-activity';
import { ReadAdmission } from './services/read-admission';
import { IngestService } from './services/ingest.service';
import { KeyBootstrapService } from './services/key-bootstrap.service';
import { ProjectorService } from './services/projector.service';
import { AgentReportsService } from './services/agent-reports.service';
import { DeliveryService } from './services/delivery.service';
import { FindingsService } from './services/findings.service';
import { FixService } from './services/fix.service';
import { OwnerService } from './services/owner.service';
import { ReportSeriesService } from './services/report-series.service';
import { RetryWasteService } from './services/retry-waste.service';
import { TraceTimelineService } from './services/trace-timeline.service';

export const repositories = [
  CheckpointRepository,
  EventRepository,
  ProjectRepository,
  ReadModelRepository,
  RollupRepository,
  RollupQueryRepository,
  OwnerRepository,
  FixRepository,
  DeliveryRepository,
  TraceItemsRepository,
  StatisticsRepository,
];
export const services = [
  ApiKeyService,
  HealthService,
  IngestActivity,
  IngestService,
  ReadAdmission,
  KeyBootstrapService,
  ProjectorService,
  RetryWasteService,
  ReportSeriesService,
  TraceTimelineService,
  AgentReportsService,
  FindingsService,
  OwnerService,
  FixService,
  DeliveryService,
];

/** Closes the database last, after the HTTP server has drained its in-flight requests. */
class DatabaseCloser implements OnApplicationShutdown {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async onApplicationShutdown(): Promise<void> {
    await this.database.destroy();
    new Logger('Errata').log('stopped');
  }
}

@Module({})
export class AppModule {
  /** The whole service for `config`, on `database`: opened and migrated before (`openMigratedDatabase`). */
  static forRoot(config: AppConfig, database: Database): DynamicModule {
    return {
      module: AppModule,
      controllers: [
        OtlpIngestController,
        ReportsController,
        FindingsController,
        TracesController,
        OwnersController,
        McpController,
        HealthController,
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: DatabaseExceptionFilter },
        { provide: DATABASE, useValue: database },
        DatabaseCloser,
        ConnectionDrain,
        ApiKeyGuard,
        ...repositories,
        ...services,
      ],
    };
  }
}
