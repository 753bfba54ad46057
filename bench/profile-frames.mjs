// How the profile tools name a V8 call frame: one key per function (name, path relative to the repository, line)
// and the package or area it belongs to.
import { resolve } from 'node:path';

const ROOT = resolve(new URL('..', import.meta.url).pathname);

export function shortUrl(url) {
  if (!url) return '';
  let path = url.replace(/^file:\/\//, '');
  if (path.startsWith(ROOT)) path = path.slice(ROOT.length + 1);
  return path;
}

export function packageOf(frame) {
  const url = shortUrl(frame.url);
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native / V8 builtins)';
  if (url.startsWith('node:')) return 'node: core';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  const ws = /^(libs\/[^/]+|apps\/[^/]+)/.exec(url);
  return ws ? ws[1] : url;
}

export const frameKey = (frame) =>
  `${frame.functionName || '(anonymous)'}  ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
