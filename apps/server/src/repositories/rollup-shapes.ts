import { CALL_MEASURES, FINDING_MEASURES, REPORT_MEASURES } from '@errata/domain';
import { sql, type RawBuilder } from 'kysely';

/**
 * The three rollups and how each sums the `contribution` rows of its kind: its dimensions (rollup column ←
 * contribution column) and its measures (rollup columns ← keys of `contribution.measures`). Identifiers here
 * are constants, so they are spliced into SQL as they are.
 */
export interface RollupShape {
  readonly table: 'call_rollup' | 'finding_rollup' | 'report_rollup';
  readonly kind: 'call' | 'finding' | 'report';
  readonly dimensions: readonly (readonly [column: string, source: string])[];
  readonly measures: readonly string[];
}

export const CALL_ROLLUP: RollupShape = {
  table: 'call_rollup',
  kind: 'call',
  dimensions: [
    ['server', 'server'],
    ['tool', 'tool'],
    ['server_version', 'server_version'],
    ['agent_name', 'agent_name'],
    ['agent_id', 'agent_id'],
    ['category', 'category'],
  ],
  measures: CALL_MEASURES,
};

export const FINDING_ROLLUP: RollupShape = {
  table: 'finding_rollup',
  kind: 'finding',
  dimensions: [
    ['server', 'server'],
    ['tool', 'tool'],
    ['rule', 'part'],
    ['evidence', 'evidence'],
    ['server_version', 'server_version'],
    ['agent_name', 'agent_name'],
    ['agent_id', 'agent_id'],
  ],
  measures: FINDING_MEASURES,
};

export const REPORT_ROLLUP: RollupShape = {
  table: 'report_rollup',
  kind: 'report',
  dimensions: [
    ['agent_name', 'agent_name'],
    ['agent_id', 'agent_id'],
  ],
  measures: REPORT_MEASURES,
};

export const ROLLUPS: readonly RollupShape[] = [CALL_ROLLUP, FINDING_ROLLUP, REPORT_ROLLUP];

export const list = (names: readonly string[]): RawBuilder<unknown> => sql.raw(names.join(', '));

/** `contribution` columns as the rollup's dimension names. */
export const dimensionSources = (shape: RollupShape): RawBuilder<unknown> =>
  list(shape.dimensions.map(([column, source]) => `c.${source} AS ${column}`));

/**
 * The SQL type a measure is summed in: counts fit bigint; wasted nanoseconds add up durations, each below 2^63, and
 * are numeric (migrations 0008 and 0010), where their sums cannot overflow.
 */
export const measureType = (measure: string): 'bigint' | 'numeric' =>
  measure === 'wasted_ns' ? 'numeric' : 'bigint';

/** A contribution's measures as columns (0 when absent). */
export const measureValues = (shape: RollupShape): RawBuilder<unknown> =>
  list(shape.measures.map((m) => `coalesce((c.measures->>'${m}')::${measureType(m)}, 0) AS ${m}`));
