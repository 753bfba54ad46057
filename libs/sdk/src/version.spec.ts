import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { PACKAGE_NAME, PACKAGE_VERSION } from './version';

it('the instrumentation scope names the package as published', () => {
  const manifest = JSON.parse(readFileSync(join(__dirname, '../package.json'), 'utf8')) as Record<
    string,
    string
  >;
  expect({ PACKAGE_NAME, PACKAGE_VERSION }).toEqual({
    PACKAGE_NAME: manifest['name'],
    PACKAGE_VERSION: manifest['version'],
  });
});
