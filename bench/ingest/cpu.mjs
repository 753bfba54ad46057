// CPU seconds and peak RSS from /proc (Linux only): the benchmark attributes a run's CPU to the server, Postgres,
// itself and everything else, to tell a CPU-bound result from one waiting on I/O.
import { readdirSync, readFileSync } from 'node:fs';
import { withClient } from './postgres.mjs';

const CLK_TCK = 100;

/** utime, stime, cutime, cstime of a process in seconds, or null if it is gone. */
export function procCpu(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = (i) => Number(fields[i]);
    return { own: (ticks(11) + ticks(12)) / CLK_TCK, children: (ticks(13) + ticks(14)) / CLK_TCK };
  } catch {
    return null;
  }
}

/** pid → CPU seconds (own + reaped children) of every `postgres` process: backends, walwriter, checkpointer… */
export function postgresCpu() {
  const out = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const cpu = procCpu(entry);
    if (cpu) out.set(entry, cpu.own + cpu.children);
  }
  return out;
}

/**
 * CPU seconds since `before` of the Postgres processes serving this benchmark: backends connected to `database`
 * (server pool, projector, autovacuum) and the shared background processes (walwriter, checkpointer, …); other
 * databases' backends (someone else's tests) are left out.
 */
export async function postgresCpuSince(before, database) {
  const { rows } = await withClient(null, (c) =>
    c.query(
      `SELECT pid FROM pg_stat_activity WHERE (datname = $1 OR backend_type <> 'client backend') AND pid <> pg_backend_pid()`,
      [database],
    ),
  );
  const ours = new Set(rows.map((row) => String(row.pid)));
  ours.add(postmasterPid());
  let total = 0;
  for (const [pid, seconds] of postgresCpu()) if (ours.has(pid)) total += seconds - (before.get(pid) ?? 0);
  return total;
}

function postmasterPid() {
  let pid = null;
  for (const [candidate] of postgresCpu()) {
    try {
      const stat = readFileSync(`/proc/${candidate}/stat`, 'utf8');
      const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      if (readFileSync(`/proc/${ppid}/comm`, 'utf8').trim() !== 'postgres') pid = candidate;
    } catch {
      // gone
    }
  }
  return pid;
}

/** Busy CPU seconds of the whole machine (all cores), from /proc/stat. */
export function machineBusyCpu() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return (user + nice + system + irq + softirq + (steal ?? 0)) / CLK_TCK;
}

export function procStatusMb(pid, field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}
