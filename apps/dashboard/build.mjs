// Bundles the dashboard into dist/: index.html and content-hashed assets. Run by `npm run build`.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
const hash = createHash('sha256').update(html).digest('hex').slice(0, 12);
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
const sizes = result.outputFiles
  .filter((f) => !f.path.endsWith('.map'))
  .map((f) => `${f.path.slice(dist.length + 1)} ${kib(f.contents.length)}`);
process.stdout.write(`dashboard built (${hash}): ${sizes.join(', ')}\n`);
