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
  },
});
