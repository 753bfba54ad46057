// One child process per run: started, given CHILD_TIMEOUT_MS, its result line parsed. Anything else (a non-zero
// exit, a signal, no result line, the timeout) is an error that stops the invocation.
import { spawn } from 'node:child_process';
import { CHILD_ENTRY, CHILD_NODE_OPTIONS, CHILD_TIMEOUT_MS, RESULT_MARKER, ROOT } from './settings.mjs';

const TAIL_BYTES = 8_192;
const tail = (text) => (text.length > TAIL_BYTES ? `…${text.slice(-TAIL_BYTES)}` : text);

/** Started and not yet exited, so an interrupted invocation can kill them. */
export const liveChildren = new Set();

export function runChild(variant, round) {
  return new Promise((resolveRun, reject) => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS; // flags go through BENCH_SDK_NODE_OPTIONS, explicitly
    const child = spawn(process.execPath, [...CHILD_NODE_OPTIONS, CHILD_ENTRY, variant, String(round)], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    liveChildren.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, CHILD_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      liveChildren.delete(child);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      liveChildren.delete(child);
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_MARKER));
      if (timedOut || code !== 0 || line === undefined) {
        const why = timedOut
          ? `killed after ${CHILD_TIMEOUT_MS} ms`
          : code !== 0
            ? `exited with ${signal ?? `code ${code}`}`
            : 'printed no result';
        reject(new Error(`${variant} (round ${round}) ${why}\n${tail(stderr)}`.trimEnd()));
        return;
      }
      resolveRun(JSON.parse(line.slice(RESULT_MARKER.length)));
    });
  });
}
