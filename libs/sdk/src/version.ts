/** Kept equal to package.json by a test (version.spec.ts). */
export const PACKAGE_NAME = '@errata/sdk';
export const PACKAGE_VERSION = '0.1.0';
