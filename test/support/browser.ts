import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium (installed by .ci/run), headless, driven by playwright-core: no browser download. */
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/**
 * A page of a new desktop-sized context (1360×900), signed in with `readKey` as the sign-in form leaves it (in
 * sessionStorage); `bypassCSP` for tests that look into the page with scripts of their own.
 */
export async function signedInPage(
  browser: Browser,
  readKey: string,
  options: { readonly bypassCSP?: boolean } = {},
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, ...options });
  context.setDefaultTimeout(10_000);
  await context.addInitScript((key) => sessionStorage.setItem('errata.readKey', key), readKey);
  return context.newPage();
}

/** What `page` has asked for and not yet been answered (`requestsOf`). */
export interface PageRequests {
  /** Resolves once no request has been under way for two looks 25 ms apart. */
  settled(): Promise<void>;
}

/**
 * Counts `page`'s requests from now on: settled, a view has had what it asked for answered (its report, the filter
 * bar's lists). Playwright's `networkidle` waits for half a second of silence after every page load instead.
 */
export function requestsOf(page: Page): PageRequests {
  let inFlight = 0;
  page.on('request', () => void inFlight++);
  page.on('requestfinished', () => void inFlight--);
  page.on('requestfailed', () => void inFlight--);
  return {
    async settled() {
      for (let idle = 0; idle < 2;) {
        await page.waitForTimeout(25);
        idle = inFlight === 0 ? idle + 1 : 0;
      }
    },
  };
}

/** Screenshots and other files a browser test leaves for people to look at: `artifacts/<suite>/`. */
export function artifactDir(suite: string): string {
  const dir = join(__dirname, '../../artifacts', suite);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** WCAG 2's contrast ratio of two computed CSS colours (`rgb(…)` / `rgba(…)`). */
export function contrastRatio(a: string, b: string): number {
  const luminance = (colour: string) => {
    const [r, g, bl] = colour
      .match(/\d+/g)!
      .slice(0, 3)
      .map((c) => {
        const x = Number(c) / 255;
        return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
      });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [la, lb] = [luminance(a), luminance(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}
