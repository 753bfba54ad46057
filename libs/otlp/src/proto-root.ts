import * as path from 'node:path';
import * as protobuf from 'protobufjs';

/** `src/` under vitest and `dist/` at runtime both sit one level below the package root. */
const PROTO_DIR = path.join(__dirname, '..', 'proto');

const PROTO_FILES = ['opentelemetry/proto/collector/trace/v1/trace_service.proto', 'google/rpc/status.proto'];

export interface ProtoTypes {
  readonly exportTraceServiceRequest: protobuf.Type;
  readonly exportTraceServiceResponse: protobuf.Type;
  readonly status: protobuf.Type;
}

let loaded: ProtoTypes | undefined;

/** Parsed once, on first use, so importing the package costs no file I/O. */
export function protoTypes(): ProtoTypes {
  loaded ??= loadProtoTypes();
  return loaded;
}

function loadProtoTypes(): ProtoTypes {
  // Without long.js protobufjs hands out 64-bit integers as doubles, which cannot hold a nanosecond
  // timestamp exactly; long is a dependency of protobufjs 8, so this only trips on a broken install.
  if (!protobuf.util.Long) {
    throw new Error('protobufjs is running without long.js; 64-bit OTLP fields would lose precision');
  }
  const root = new protobuf.Root();
  // Imports are written relative to the proto directory, as in the upstream repository; the
  // google/protobuf/* well-known types are bundled with protobufjs and never reach this resolver.
  root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(PROTO_DIR, target));
  root.loadSync(PROTO_FILES);
  root.resolveAll();
  return {
    exportTraceServiceRequest: root.lookupType(
      'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest',
    ),
    exportTraceServiceResponse: root.lookupType(
      'opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse',
    ),
    status: root.lookupType('google.rpc.Status'),
  };
}
