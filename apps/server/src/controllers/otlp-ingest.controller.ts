import {
  Controller,
  HttpCode,
  Inject,
  Post,
  Req,
  Res,
  UnsupportedMediaTypeException,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { ApiBody, ApiConsumes } from '@nestjs/swagger';
import { encodeTraceResponse, encodingForContentType, partialSuccessMessage } from '@errata/otlp';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ApiKeyGuard, CurrentPrincipal, RequireScope } from '../http/api-key.guard';
import { ApiIngestKey } from '../http/openapi';
import { ApiOtlpResponses } from '../http/openapi-schemas';
import { OtlpExceptionFilter } from '../http/otlp-exception.filter';
import { readRequestBody } from '../http/read-request-body';
import type { Principal } from '../services/api-key.service';
import { IngestService } from '../services/ingest.service';

/** OTLP/HTTP traces receiver (https://opentelemetry.io/docs/specs/otlp/#otlphttp). */
@Controller('v1')
@UseGuards(ApiKeyGuard)
@UseFilters(OtlpExceptionFilter)
export class OtlpIngestController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly ingest: IngestService,
  ) {}

  @Post('traces')
  @HttpCode(200) // for the OpenAPI document (the handler answers itself): OTLP/HTTP answers a success with 200
  @ApiIngestKey()
  @ApiConsumes('application/x-protobuf', 'application/json')
  @ApiBody({
    required: true,
    description:
      'An OTLP ExportTraceServiceRequest: protobuf, or OTLP/JSON (the proto3 JSON mapping); gzipped with Content-Encoding: gzip.',
    schema: {},
  })
  @ApiOtlpResponses()
  @RequireScope('ingest')
  async exportTraces(@CurrentPrincipal() principal: Principal, @Req() req: Request, @Res() res: Response) {
    const contentType = req.headers['content-type'];
    const encoding = encodingForContentType(contentType);
    if (!encoding) {
      throw new UnsupportedMediaTypeException(
        `unsupported Content-Type "${contentType ?? ''}"; send application/x-protobuf or application/json`,
      );
    }
    const result = await this.ingest.ingest(
      { id: principal.projectId, storeArguments: principal.storeArguments },
      () => readRequestBody(req, this.config.maxBodyBytes, this.config.bodyTimeoutMs),
      encoding,
    );
    const partial =
      result.rejected.length > 0
        ? { rejectedSpans: result.rejected.length, errorMessage: partialSuccessMessage(result.rejected) }
        : undefined;
    res.status(200).type(encoding === 'json' ? 'application/json' : 'application/x-protobuf');
    res.send(encodeTraceResponse(encoding, partial));
  }
}
