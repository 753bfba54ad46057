/**
 * The rule patterns run on every stored text of every failed call, in the process that also answers the API: one
 * that backtracks without bound on a crafted text stalls it (a `.*` between two words did: 16 KiB of "start date
 * after" took 2.4 s, 100 KB minutes). Each pattern runs here on 100 KB made of its own words, repeated with and
 * without the separators it looks for; linear patterns take about a millisecond. The bound is orders of magnitude
 * above that: it catches a blow-up, not a slowdown.
 */
import { describe, expect, it } from 'vitest';
import {
  EMPTY_TEXT_ANY_TOOL,
  EMPTY_TEXT_SEARCH_TOOL,
  FAILURE_TEXT_RULES,
  HTTP_STATUS_IN_TEXT,
  LEAK_RULES,
  RAW_EXCEPTION,
  TEXT_RULES,
  UNKNOWN_TOOL_TEXT,
} from './rules';

const PATTERNS: [string, RegExp][] = [
  ...TEXT_RULES.map((rule): [string, RegExp] => [rule.id, rule.pattern]),
  ...FAILURE_TEXT_RULES.map((rule): [string, RegExp] => [rule.id, rule.pattern]),
  ...LEAK_RULES.map((rule): [string, RegExp] => [rule.id, rule.pattern]),
  ['EMPTY_TEXT_ANY_TOOL', EMPTY_TEXT_ANY_TOOL],
  ['EMPTY_TEXT_SEARCH_TOOL', EMPTY_TEXT_SEARCH_TOOL],
  ['UNKNOWN_TOOL_TEXT', UNKNOWN_TOOL_TEXT],
  ['HTTP_STATUS_IN_TEXT', HTTP_STATUS_IN_TEXT],
  ['RAW_EXCEPTION', RAW_EXCEPTION],
];

const SIZE = 100_000;

/** Texts made of the pattern's own words: every prefix of its word list, repeated, and each word repeated alone. */
function adversarialTexts(pattern: RegExp): string[] {
  const words = pattern.source.match(/[A-Za-z]{2,}/g) ?? ['a'];
  const repeated = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
  const units = [
    ...words.map((_, i) => `${words.slice(0, i + 1).join(' ')} `),
    ...words.map((word) => `${word} `),
    words.join('\n'),
    ' ',
    'a',
    '\t ',
  ];
  return units.map(repeated);
}

describe('rule patterns', () => {
  it.each(PATTERNS)('%s takes time linear in the text', (_id, pattern) => {
    for (const text of adversarialTexts(pattern)) {
      const started = performance.now();
      pattern.test(text);
      pattern.lastIndex = 0;
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });
});
