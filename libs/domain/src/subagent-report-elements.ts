/** What a subagent report carries (DOMAIN.md §4): the four propagation elements and the coverage buckets. */
import type { SubagentReportFact } from './subagent-coverage-report';

export type PropagationElement = 'category' | 'attempted' | 'partialResults' | 'alternatives';

/** The four elements of a failure report (DOMAIN.md §4), in report order. */
export const PROPAGATION_ELEMENTS: readonly PropagationElement[] = [
  'category',
  'attempted',
  'partialResults',
  'alternatives',
];

/** Coverage buckets: [0, 25 %), [25, 50 %), [50, 75 %), [75, 100 %) and exactly 100 %. */
export const COVERAGE_BUCKETS = ['0-25', '25-50', '50-75', '75-100', '100'] as const;
export type CoverageBucket = (typeof COVERAGE_BUCKETS)[number];

export function coverageBucket(coverage: number): CoverageBucket {
  if (coverage >= 1) return '100';
  if (coverage >= 0.75) return '75-100';
  if (coverage >= 0.5) return '50-75';
  return coverage >= 0.25 ? '25-50' : '0-25';
}

/**
 * The elements a report leaves out, in report order. An element counts as carried when present: a
 * partial-results count of 0 is an explicit "nothing came back".
 */
export function missingElements(report: SubagentReportFact): PropagationElement[] {
  return PROPAGATION_ELEMENTS.filter((element) => {
    if (element === 'category') return report.category === null || report.category.trim() === '';
    if (element === 'partialResults') return report.partialResults === null || report.partialResults === '';
    return (report[element]?.length ?? 0) === 0;
  });
}
