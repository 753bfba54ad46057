import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountDashboard } from './dashboard';

@Module({})
class NothingModule {}

describe('mountDashboard without a build', () => {
  let app: NestExpressApplication;
  let dir: string;
  let url: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'errata-no-dashboard-'));
    app = await NestFactory.create<NestExpressApplication>(NothingModule, { logger: false });
    mountDashboard(app, dir);
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers the pages with 503 and how to build the dashboard', async () => {
    const response = await fetch(`${url}/`);
    expect(response.status).toBe(503);
    expect(await response.text()).toContain('npm run build');
  });
});
