import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
  Req,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { FIX_STATES } from '@errata/domain';
import type { Request } from 'express';
import { DocumentedQueryOnly } from '../http/documented-query.interceptor';
import { ReadAdmitted } from '../http/read-admission.interceptor';
import { ApiKeyGuard, CurrentPrincipal, RequireScope } from '../http/api-key.guard';
import { MAX_LIMIT, parseFindingId, parseLimitOffset } from '../http/findings-page';
import { ApiAdminKey, ApiListPage, QueryParameter } from '../http/openapi';
import { ApiErrors, ApiOk } from '../http/openapi-schemas';
import { givenText, optionalText, readJsonObject, requiredText } from '../http/json-body';
import { optionalChoice } from '../http/text-parameter';
import { BadRequestException } from '@nestjs/common';
import type { Principal } from '../services/api-key.service';
import { DELIVERY_STATUSES } from '../repositories/delivery.repository';
import { DeliveryService } from '../services/delivery.service';
import { FixService } from '../services/fix.service';
import { OwnerService } from '../services/owner.service';

/** An owner or delivery id: Nest's own message ("uuid is expected") does not say which parameter. */
const UUID_ID = new ParseUUIDPipe({
  exceptionFactory: () => new BadRequestException('"id" must be a UUID, as the lists give them'),
});

/**
 * Fix delivery (DOMAIN.md §7), admin keys only: who owns which MCP server and where fixes go, the fixes and their
 * lifecycle, and the webhook deliveries (dead letters included) with manual redelivery.
 */
@ApiTags('fixes')
@ApiAdminKey()
@Controller('api/v1')
@UseGuards(ApiKeyGuard)
@UseInterceptors(DocumentedQueryOnly)
@RequireScope('admin')
export class OwnersController {
  constructor(
    private readonly owners: OwnerService,
    private readonly fixes: FixService,
    private readonly deliveries: DeliveryService,
  ) {}

  @Post('owners')
  @ApiOperation({
    summary:
      'Register the owner of an MCP server: { server, versionRange?, webhookUrl, contact? }; the answer holds the signing secret, once',
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['server', 'webhookUrl'],
      additionalProperties: false,
      properties: {
        server: { type: 'string', description: 'the MCP server name (serverInfo.name)' },
        versionRange: {
          type: 'string',
          description:
            'comparators such as ">=1.2.0 <2" or an x-range such as "2.x", stored canonical (">=1.2.0 <2.0.0"); all versions when absent (an empty range is refused)',
        },
        webhookUrl: {
          type: 'string',
          description: 'https:// (http and internal addresses only with ERRATA_WEBHOOK_ALLOW_INTERNAL)',
        },
        contact: { type: 'string' },
      },
    },
  })
  @ApiOk('OwnerWithSecret', {
    status: 201,
    description: 'Registered; the answer holds the signing secret, once.',
  })
  @ApiErrors(400, 401, 403, 413)
  async registerOwner(@CurrentPrincipal() principal: Principal, @Req() request: Request) {
    const body = await readJsonObject(request, ['server', 'versionRange', 'webhookUrl', 'contact']);
    return this.owners.register(principal.projectId, {
      serverName: requiredText(body, 'server'),
      // "" is not "every version" (that is leaving it out): the service refuses it
      versionRange: givenText(body, 'versionRange'),
      webhookUrl: requiredText(body, 'webhookUrl'),
      contact: optionalText(body, 'contact'),
    });
  }

  @Get('owners')
  @ApiOperation({ summary: 'The owners of MCP servers in this project (secrets are never shown again)' })
  @ApiOk('Owner', { array: true })
  @ApiErrors(400, 401, 403)
  listOwners(@CurrentPrincipal() principal: Principal) {
    return this.owners.list(principal.projectId);
  }

  @Delete('owners/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove an owner (and its pending deliveries)' })
  @ApiResponse({ status: 204, description: 'Removed.' })
  @ApiErrors(400, 401, 403, 404)
  async removeOwner(@CurrentPrincipal() principal: Principal, @Param('id', UUID_ID) id: string) {
    await this.owners.remove(principal.projectId, id);
  }

  @Post('owners/:id/rotate-secret')
  @ApiOperation({
    summary: 'A new signing secret; the previous one keeps signing alongside until the next rotation',
  })
  @ApiOk('OwnerWithSecret', { status: 201, description: 'Rotated; the answer holds the new secret, once.' })
  @ApiErrors(400, 401, 403, 404, 413)
  async rotateSecret(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UUID_ID) id: string,
    @Req() request: Request,
  ) {
    await readJsonObject(request, []);
    return this.owners.rotateSecret(principal.projectId, id);
  }

  @Post('owners/:id/enable')
  @ApiOperation({ summary: 'Re-enable an endpoint that answered 410 Gone' })
  @ApiOk('Owner', { status: 201, description: 'Enabled.' })
  @ApiErrors(400, 401, 403, 404, 413)
  async enableOwner(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UUID_ID) id: string,
    @Req() request: Request,
  ) {
    await readJsonObject(request, []);
    return this.owners.enable(principal.projectId, id);
  }

  @Get('fixes')
  @ApiOperation({
    summary: 'The fixes and where each stands: suggested, delivered, acknowledged, verified or regressed',
  })
  @QueryParameter({ name: 'state', required: false, enum: FIX_STATES })
  @ApiListPage(MAX_LIMIT)
  @ApiOk('Fix', {
    array: true,
    description:
      'By finding id: `limit` of them (at most 500) after the first `offset`; `state` only, when given.',
  })
  @ApiErrors(400, 401, 403)
  listFixes(
    @CurrentPrincipal() principal: Principal,
    @Query('state') state?: string,
    @Query('limit') limit?: string,
    @Query('offset') offset?: string,
  ) {
    return this.fixes.list(
      principal.projectId,
      optionalChoice(state, 'state', FIX_STATES),
      parseLimitOffset(limit, offset, MAX_LIMIT),
    );
  }

  @Get('fixes/:findingId')
  @ApiOperation({ summary: 'One fix with its lifecycle events' })
  @ApiOk('FixDetail')
  @ApiErrors(400, 401, 403, 404)
  getFix(@CurrentPrincipal() principal: Principal, @Param('findingId') findingId: string) {
    return this.fixes.get(principal.projectId, parseFindingId(findingId));
  }

  // A read place, as the reads': an id with no fix is looked up in the findings over the project's whole history.
  @Post('findings/:id/acknowledge')
  @UseInterceptors(ReadAdmitted)
  @ApiOperation({ summary: "Record that the server's owner acknowledged the fix" })
  @ApiOk('Fix', {
    status: 201,
    description:
      'Acknowledged, now or already (a repeated acknowledgement records nothing: the first one stands).',
  })
  @ApiErrors(400, 401, 403, 404, 413)
  async acknowledge(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Req() request: Request,
  ) {
    const findingId = parseFindingId(id);
    // Who acknowledged is the channel (api, cli, mcp): a body naming someone would be recorded as "api" without a word.
    await readJsonObject(request, []);
    return this.fixes.acknowledge(principal.projectId, findingId, 'api');
  }

  @Get('deliveries')
  @ApiOperation({ summary: 'Webhook deliveries, newest first; ?status=dead lists the dead letters' })
  @QueryParameter({ name: 'status', required: false, enum: DELIVERY_STATUSES })
  @ApiListPage(MAX_LIMIT)
  @ApiOk('Delivery', {
    array: true,
    description: 'Newest first: `limit` of them (at most 500) after the first `offset`.',
  })
  @ApiErrors(400, 401, 403)
  listDeliveries(
    @CurrentPrincipal() principal: Principal,
    @Query('status') status?: string,
    @Query('limit') limit?: string,
    @Query('offset') offset?: string,
  ) {
    return this.deliveries.list(
      principal.projectId,
      optionalChoice(status, 'status', DELIVERY_STATUSES),
      parseLimitOffset(limit, offset, MAX_LIMIT),
    );
  }

  @Post('deliveries/:id/redeliver')
  @ApiOperation({
    summary: 'Send a dead-lettered, disabled or delivered message again, with the same webhook-id',
  })
  @ApiOk('Delivery', { status: 201, description: 'Queued again.' })
  @ApiErrors(400, 401, 403, 404, 409, 413)
  async redeliver(
    @CurrentPrincipal() principal: Principal,
    @Param('id', UUID_ID) id: string,
    @Req() request: Request,
  ) {
    await readJsonObject(request, []);
    return this.deliveries.redeliver(principal.projectId, id);
  }
}
