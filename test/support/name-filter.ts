import type { Page } from 'playwright-core';

/** A filter bar's name filter (components/name-combobox.tsx), by its URL parameter. */
export type NameFilterName = 'server' | 'tool' | 'agent';

/** The filter's list, opened (as Alt+ArrowDown does) if it is not: its options. */
export async function openNameFilter(page: Page, name: NameFilterName) {
  const input = page.locator(`#filter-${name}`);
  if ((await input.getAttribute('aria-expanded')) !== 'true') {
    await input.focus();
    await page.keyboard.press('Alt+ArrowDown');
  }
  return page.locator(`#filter-${name}-list [role="option"]`);
}

/**
 * The names the filter offers once its list has loaded (the first, "" , is "All …"), each with its label's text and
 * whether the label is isolated in a `<bdi>`; the list is closed again after.
 */
export async function offeredNames(page: Page, name: NameFilterName, atLeast = 2) {
  const options = await openNameFilter(page, name);
  await options.nth(atLeast - 1).waitFor({ state: 'attached' });
  const offered = await options.evaluateAll((all) =>
    all.map((option) => ({
      name: option.getAttribute('data-name')!,
      label: option.textContent!,
      isolated: option.querySelector('bdi')?.textContent === option.textContent,
    })),
  );
  await page.keyboard.press('Escape');
  return offered;
}

/** Chooses `value` (null: "All …") in the filter, as a user does: typing part of it and picking it from the list. */
export async function chooseName(page: Page, name: NameFilterName, value: string | null): Promise<void> {
  const input = page.locator(`#filter-${name}`);
  await input.fill(value ?? '');
  const options = await openNameFilter(page, name);
  const option = options.and(page.locator(`[data-name="${(value ?? '').replace(/["\\]/g, '\\$&')}"]`));
  await option.click();
}
