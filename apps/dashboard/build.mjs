// Bundles the dashboard into dist/: index.html and content-hashed assets, each asset also brotli- and gzip-compressed
// beside it (`.br`, `.gz`), which the server sends to a client that takes them. Run by `npm run build`.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
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
  br: (bytes) =>
    promisify(brotliCompress)(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 11,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
};
/** Coded sizes by file: the codings run at once, on zlib's threads. */
const coded = new Map(
  await Promise.all(
    result.outputFiles.map(async (file) => {
      const sizes = {};
      if (file.contents.length < MIN_BYTES) return [file.path, sizes];
      await Promise.all(
        Object.entries(CODINGS).map(async ([suffix, code]) => {
          // Source maps only in gzip: brotli's 11 takes some 8 s over the 3.5 MB map, on every build (and `npm
          // start`), for a file only a browser's developer tools ask for.
          if (suffix === 'br' && file.path.endsWith('.map')) return;
          const bytes = await code(file.contents);
          if (bytes.length > file.contents.length * 0.9) return;
          await writeFile(`${file.path}.${suffix}`, bytes);
          sizes[suffix] = bytes.length;
        }),
      );
      return [file.path, sizes];
    }),
  ),
);

const hash = createHash('sha256').update(html).digest('hex').slice(0, 12);
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
const sizes = result.outputFiles
  .filter((f) => !f.path.endsWith('.map'))
  .map((f) => {
    const { gz, br } = coded.get(f.path);
    const codings = [gz && `gzip ${kib(gz)}`, br && `br ${kib(br)}`].filter(Boolean);
    return `${f.path.slice(dist.length + 1)} ${kib(f.contents.length)}${codings.length ? ` (${codings.join(', ')})` : ''}`;
  });
process.stdout.write(`dashboard built (${hash}): ${sizes.join(', ')}\n`);
