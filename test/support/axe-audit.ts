import type { AxeResults, RunOptions } from 'axe-core';
import type { Page } from 'playwright-core';

/**
 * axe-core's serious and critical findings on `page` (within `within`, a selector, or the whole document; only `rules`
 * when given): its violations, and those it could not decide (a label on an element that may not have one) but for
 * colour contrast, which it cannot compute over a decorative glyph. Each as "rule (impact, n×: first element)". The
 * page's context must bypass its content-security policy: axe is injected as an inline script.
 */
export async function axeFindings(page: Page, rules?: readonly string[], within?: string): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window)))
    await page.addScriptTag({ path: require.resolve('axe-core') });
  // Passes and inapplicable rules are not listed: axe's own way to run faster.
  const options: RunOptions = {
    resultTypes: ['violations', 'incomplete'],
    ...(rules ? { runOnly: { type: 'rule', values: [...rules] } } : {}),
  };
  // A promise chain, not an async function: the test's transpiler would call helpers the page does not have.
  return page.evaluate(
    (arg) =>
      (
        window as unknown as {
          axe: { run: (context: Element | Document, options: RunOptions) => Promise<AxeResults> };
        }
      ).axe
        .run(arg.within === null ? document : document.querySelector(arg.within)!, arg.options)
        .then((results) =>
          results.violations
            .concat(results.incomplete.filter((v) => v.id !== 'color-contrast'))
            .filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map((v) => `${v.id} (${v.impact}, ${v.nodes.length}×: ${v.nodes[0]!.target.join(' ')})`),
        ),
    { options, within: within ?? null },
  );
}
