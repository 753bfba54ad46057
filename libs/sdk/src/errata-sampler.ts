import { diag, type Attributes, type Context, type Link, type SpanKind } from '@opentelemetry/api';
import {
  AlwaysOnSampler,
  ParentBasedSampler,
  SamplingDecision,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-base';
import { safeDiag } from './safe-diag';

/**
 * The sampler of Errata's own provider: every span Errata creates is recorded and exported, whatever is sampled.
 * Reports that see one call in ten count neither retries nor escalations right. Whether a span is *sampled* — the
 * flag its trace context carries to the host's spans inside an agent run and to the MCP server — is what the
 * host's sampling says: a parent's decision, or for a root span the sampler OTEL_TRACES_SAMPLER configures, as the
 * host's own provider would decide. A span it would drop is recorded all the same (RECORD), not sampled;
 * ErrataSpanProcessor exports recorded spans either way.
 */
export class RecordEverythingSampler implements Sampler {
  constructor(private readonly hostSampling: Sampler = samplerFromEnvironment()) {}

  shouldSample(
    context: Context,
    traceId: string,
    spanName: string,
    spanKind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    const host = this.hostSampling.shouldSample(context, traceId, spanName, spanKind, attributes, links);
    const sampled = host.decision === SamplingDecision.RECORD_AND_SAMPLED;
    return { ...host, decision: sampled ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.RECORD };
  }

  toString(): string {
    return `ErrataRecordEverythingSampler{${this.hostSampling.toString()}}`;
  }
}

/**
 * OpenTelemetry's own reading of OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (what a NodeTracerProvider
 * without a sampler uses). The package does not export it from its index; without it, OpenTelemetry's default.
 */
function samplerFromEnvironment(): Sampler {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const config = require('@opentelemetry/sdk-trace-base/build/src/config') as {
      buildSamplerFromEnv?: () => Sampler;
    };
    if (typeof config.buildSamplerFromEnv === 'function') return config.buildSamplerFromEnv();
  } catch (error) {
    safeDiag(() =>
      diag.debug('@errata/sdk: OTEL_TRACES_SAMPLER could not be read; parent-based, always on', error),
    );
  }
  return new ParentBasedSampler({ root: new AlwaysOnSampler() });
}
