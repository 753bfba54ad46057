import { isSpanContextValid, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { SamplingDecision, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace-base';

/**
 * The sampler of Errata's own provider: every span Errata creates is recorded, whatever the host sampled. Reports
 * that see one call in ten count neither retries nor escalations right. Under a parent the host did not sample, the
 * span is recorded but not sampled (RECORD), so the trace context it sends on keeps the host's decision for the
 * MCP server and whatever the host exports; ErrataSpanProcessor exports recorded spans either way. Set in code, so
 * the host's OTEL_TRACES_SAMPLER is not applied to Errata.
 */
export class RecordEverythingSampler implements Sampler {
  shouldSample(parentContext: Context): SamplingResult {
    const parent = trace.getSpanContext(parentContext);
    const unsampledParent =
      parent !== undefined && isSpanContextValid(parent) && (parent.traceFlags & TraceFlags.SAMPLED) === 0;
    return { decision: unsampledParent ? SamplingDecision.RECORD : SamplingDecision.RECORD_AND_SAMPLED };
  }

  toString(): string {
    return 'ErrataRecordEverythingSampler';
  }
}
