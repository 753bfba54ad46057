// The ceiling ingest is measured against: the same event rows, derived from the same bodies through the server's
// own decode/normalize code, written with one COPY into a fresh database with the same schema.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { machineBusyCpu, postgresCpu, postgresCpuSince } from './cpu.mjs';
import {
  checkpoint,
  countEvents,
  createDatabase,
  dropDatabase,
  fingerprint,
  migrate,
  urlFor,
} from './postgres.mjs';
import { copyRunLine } from './report.mjs';
import { COPY_CHUNK_BYTES, ROOT, SERVER_CONFIG } from './settings.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');
const { from: copyFrom } = require('pg-copy-streams');
const { decodeTraceRequest } = require(join(ROOT, 'libs/otlp/dist/index.js'));
const { normalizeSpan } = require(join(ROOT, 'libs/domain/dist/index.js'));
const { timestampFromUnixNano } = require(join(ROOT, 'apps/server/dist/database/timestamps.js'));

/** COPY text format: backslash, newline, carriage return and tab escaped; `\N` is NULL. */
function copyText(value) {
  if (value === null || value === undefined) return '\\N';
  return String(value).replace(/[\\\n\r\t]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t',
  );
}
const copyBytea = (hexId) => (hexId === null ? '\\N' : `\\\\x${hexId}`);

/**
 * The rows the server appends for these bodies, through the same code path: decodeTraceRequest → normalizeSpan →
 * the fields IngestService.toNewEvent derives (times via the server's timestampFromUnixNano), as COPY text lines
 * without the leading project_id column.
 */
export function eventLines(bodies) {
  const lines = [];
  for (const body of bodies) {
    const decoded = decodeTraceRequest(body, 'protobuf', {
      maxAttributeValueBytes: SERVER_CONFIG.maxAttributeBytes,
    });
    if (decoded.rejected.length > 0)
      throw new Error(`generated body has rejected spans: ${decoded.rejected[0].reason}`);
    for (const span of decoded.spans) {
      const event = normalizeSpan(span, { textLimitBytes: SERVER_CONFIG.textLimitBytes });
      if (!event) throw new Error(`generated span ${span.spanId} is not an event`);
      const toolCall = event.type === 'ToolCallObserved' ? event.data : null;
      lines.push(
        [
          copyBytea(span.traceId),
          copyBytea(span.spanId),
          copyText(timestampFromUnixNano(span.startTimeUnixNano)),
          copyText(timestampFromUnixNano(span.endTimeUnixNano)),
          copyBytea(span.parentSpanId),
          copyText(event.type),
          copyText(toolCall?.server.name ?? null),
          copyText(toolCall?.tool ?? null),
          copyText(toolCall?.outcome ?? null),
          copyText(JSON.stringify(event.data)),
        ].join('\t'),
      );
    }
  }
  return lines;
}

/** The COPY payload in ~1 MiB chunks. */
export function copyChunks(projectId, lines) {
  const chunks = [];
  let parts = [];
  let size = 0;
  for (const line of lines) {
    const row = `${projectId}\t${line}\n`;
    parts.push(row);
    size += row.length;
    if (size >= COPY_CHUNK_BYTES) {
      chunks.push(Buffer.from(parts.join(''), 'utf8'));
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) chunks.push(Buffer.from(parts.join(''), 'utf8'));
  return chunks;
}

const COPY_SQL =
  'COPY event (project_id, trace_id, span_id, start_time, end_time, parent_span_id, type, server_name, tool_name, outcome, data) FROM STDIN';

export async function copyRun(index, chunks, rowCount, expectedFingerprint) {
  const database = await createDatabase();
  try {
    await migrate(database);
    await checkpoint();
    const client = new pg.Client({ connectionString: urlFor(database) });
    await client.connect();
    let seconds;
    const pgBefore = postgresCpu();
    const machineBefore = machineBusyCpu();
    const clientBefore = process.cpuUsage();
    try {
      const started = performance.now();
      await pipeline(Readable.from(chunks), client.query(copyFrom(COPY_SQL)));
      seconds = (performance.now() - started) / 1000;
    } finally {
      await client.end();
    }
    const clientCpu = process.cpuUsage(clientBefore);
    const machineCpu = machineBusyCpu() - machineBefore;
    const pgCpu = await postgresCpuSince(pgBefore, database);
    const clientCpuSeconds = (clientCpu.user + clientCpu.system) / 1e6;
    const otherCpu = Math.max(0, machineCpu - pgCpu - clientCpuSeconds);
    const stored = await countEvents(database);
    if (stored !== rowCount)
      throw new Error(`COPY run ${index}: ${stored} rows in event, expected ${rowCount}`);
    let same = '';
    if (index === 1 && expectedFingerprint) {
      const copied = await fingerprint(database);
      if (copied.rows !== expectedFingerprint.rows || copied.checksum !== expectedFingerprint.checksum) {
        throw new Error(
          `COPY rows differ from the rows the server wrote: ${JSON.stringify(copied)} vs ${JSON.stringify(expectedFingerprint)}`,
        );
      }
      same = ' · rows identical to the server-written ones (checksum)';
    }
    const result = {
      rowsPerSecond: rowCount / seconds,
      seconds,
      cpuSeconds: { postgres: pgCpu, client: clientCpuSeconds, other: otherCpu },
    };
    console.log(copyRunLine(index, rowCount, result, same));
    return result;
  } finally {
    await dropDatabase(database);
  }
}
