import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  // SWC, not esbuild: NestJS dependency injection needs emitted decorator metadata.
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: {
    alias: {
      '@errata/domain': src('./libs/domain/src/index.ts'),
      '@errata/otlp': src('./libs/otlp/src/index.ts'),
      '@errata/sdk': src('./libs/sdk/src/index.ts'),
    },
  },
  test: {
    include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts', 'test/**/*.spec.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
