import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (installed by .ci/run), headless, driven by playwright-core: no browser download. */
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** Screenshots and other files a browser test leaves for people to look at: `artifacts/<suite>/`. */
export function artifactDir(suite: string): string {
  const dir = join(__dirname, '../../artifacts', suite);
  mkdirSync(dir, { recursive: true });
  return dir;
}
