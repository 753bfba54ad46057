import { Controller, Get, HttpCode, ServiceUnavailableException } from '@nestjs/common';
import { HealthService } from '../services/health.service';

@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  /** The process is up. */
  @Get('healthz')
  @HttpCode(200)
  live() {
    return { status: 'ok' };
  }

  /** The database answers and every migration is applied. */
  @Get('readyz')
  async ready() {
    const readiness = await this.health.readiness();
    if (!readiness.ready) throw new ServiceUnavailableException(readiness);
    return readiness;
  }
}
