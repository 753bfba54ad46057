import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  // SWC, not esbuild: NestJS dependency injection needs emitted decorator metadata.
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: {
    alias: [
      { find: /^@errata\/domain$/, replacement: src('./libs/domain/src/index.ts') },
      // The dashboard imports single modules of the domain (its tsconfig paths), to bundle only those.
      { find: /^@errata\/domain\/(.+)$/, replacement: `${src('./libs/domain/src/')}$1` },
      { find: /^@errata\/otlp$/, replacement: src('./libs/otlp/src/index.ts') },
      { find: /^@errata\/sdk$/, replacement: src('./libs/sdk/src/index.ts') },
    ],
  },
  test: {
    include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts', 'test/**/*.spec.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time on CI's two cores (Vitest's default is one fewer than the cores): most of a file's time
    // is spent waiting on child processes, PostgreSQL, chromium and timers, not computing.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
