import { Controller, Get, HttpCode, ServiceUnavailableException } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiOk } from '../http/openapi-schemas';
import { HealthService } from '../services/health.service';

@ApiTags('health')
@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  /** The process is up. */
  @Get('healthz')
  @HttpCode(200)
  @ApiOk('Health')
  live() {
    return { status: 'ok' };
  }

  /** The database answers and every migration is applied. */
  @Get('readyz')
  @ApiOk('Readiness')
  @ApiOk('Readiness', {
    status: 503,
    description:
      'Not ready: the database is unreachable, or answers but its checks fail (`failing`), or migrations are pending.',
  })
  async ready() {
    const readiness = await this.health.readiness();
    if (!readiness.ready) throw new ServiceUnavailableException(readiness);
    return readiness;
  }
}
