// Bundles the dashboard into dist/: index.html and content-hashed assets, each asset also brotli- and gzip-compressed
// beside it (`.br`, `.gz`), which the server sends to a client that takes them. Also the Swagger UI's files the
// server's /docs page loads, copied from swagger-ui-dist into dist/swagger-ui with their codings beside them: the
// server sends them as it sends the assets. Run by `npm run build`.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { build } from 'esbuild';

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, 'dist');

const result = await build({
  entryPoints: [join(root, 'src/main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: join(root, 'tsconfig.json'),
  sourcemap: 'linked',
  outdir: join(dist, 'assets'),
  entryNames: '[name]-[hash]',
  metafile: true,
  write: false,
  logLevel: 'warning',
});

await rm(dist, { recursive: true, force: true });
await mkdir(join(dist, 'assets'), { recursive: true });
const assets = {};
for (const file of result.outputFiles) {
  await writeFile(file.path, file.contents);
  const name = file.path.slice(join(dist, 'assets').length + 1);
  if (name.endsWith('.js')) assets.js = name;
  if (name.endsWith('.css')) assets.css = name;
}
const template = await readFile(join(root, 'src/index.html'), 'utf8');
const html = template
  .replace('%APP_JS%', `/assets/${assets.js}`)
  .replace('%APP_CSS%', `/assets/${assets.css}`);
await writeFile(join(dist, 'index.html'), html);

// Compressed once here, at the highest levels, rather than per request. Not a file under 1 KiB, nor a coding that
// saves less than a tenth: the server sends the file itself then. index.html is not a file the server sends (it
// answers every page with it from memory), and is a few hundred bytes.
const MIN_BYTES = 1024;
const CODINGS = {
  gz: (bytes) => promisify(gzip)(bytes, { level: 9 }),
  br: (bytes, quality = 11) =>
    promisify(brotliCompress)(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: quality,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
};
/** Writes a file's codings beside it (`path`.br, `path`.gz); its coded sizes. */
async function writeCodings(path, contents, brotliQuality) {
  const sizes = {};
  if (contents.length < MIN_BYTES) return sizes;
  await Promise.all(
    Object.entries(CODINGS).map(async ([suffix, code]) => {
      // Source maps only in gzip: brotli's 11 takes some 8 s over the 3.5 MB map, on every build (and `npm
      // start`), for a file only a browser's developer tools ask for.
      if (suffix === 'br' && path.endsWith('.map')) return;
      const bytes = await code(contents, brotliQuality);
      if (bytes.length > contents.length * 0.9) return;
      await writeFile(`${path}.${suffix}`, bytes);
      sizes[suffix] = bytes.length;
    }),
  );
  return sizes;
}

// The Swagger UI's files /docs loads (its page and swagger-ui-init.js are the server's own, compressed as it sends
// them), from the swagger-ui-dist @nestjs/swagger serves: the server serves these in its place, and the others from
// it. Brotli at 9, not 11: 11 takes some 10 s over the 1.5 MB bundle, on every build, for a tenth less.
const SWAGGER_UI_FILES = ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css'];
const requireFrom = createRequire(import.meta.url);
const swaggerUiDist = dirname(
  requireFrom.resolve('swagger-ui-dist/package.json', {
    paths: [dirname(requireFrom.resolve('@nestjs/swagger/package.json'))],
  }),
);
await mkdir(join(dist, 'swagger-ui'));
const swaggerUi = Promise.all(
  SWAGGER_UI_FILES.map(async (name) => {
    const contents = await readFile(join(swaggerUiDist, name));
    const path = join(dist, 'swagger-ui', name);
    await writeFile(path, contents);
    return [path, contents.length, await writeCodings(path, contents, 9)];
  }),
);

/** Coded sizes by file: the codings run at once, on zlib's threads. */
const coded = new Map(
  await Promise.all(
    result.outputFiles.map(async (file) => [file.path, await writeCodings(file.path, file.contents, 11)]),
  ),
);

const hash = createHash('sha256').update(html).digest('hex').slice(0, 12);
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
const files = [
  ...result.outputFiles
    .filter((f) => !f.path.endsWith('.map'))
    .map((f) => [f.path, f.contents.length, coded.get(f.path)]),
  ...(await swaggerUi),
];
const sizes = files.map(([path, size, { gz, br }]) => {
  const codings = [gz && `gzip ${kib(gz)}`, br && `br ${kib(br)}`].filter(Boolean);
  return `${path.slice(dist.length + 1)} ${kib(size)}${codings.length ? ` (${codings.join(', ')})` : ''}`;
});
process.stdout.write(`dashboard built (${hash}): ${sizes.join(', ')}\n`);
