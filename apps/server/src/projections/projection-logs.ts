import type { ProjectedTable } from '../repositories/checkpoint.repository';

export const READ_MODELS_PROJECTION = 'read-models';
/** The span edges' place in their own log order: they touch traces as events do. */
export const SPAN_EDGES_PROJECTION = 'span-edges';
/** Each projection and the table it reads in log order. */
export const PROJECTIONS = [
  [READ_MODELS_PROJECTION, 'event'],
  [SPAN_EDGES_PROJECTION, 'span_edge'],
] as const satisfies readonly (readonly [string, ProjectedTable])[];
