/**
 * Patches `@modelcontextprotocol/sdk` 1.x and `@modelcontextprotocol/client` 2.x `Client.prototype` (`callTool`, and
 * `request` to learn the negotiated protocol version), the way opentelemetry-js-contrib instrumentations do.
 *
 * ESM: the client file is declared as an InstrumentationNodeModuleFile, which the OpenTelemetry ESM loader hook
 * (import-in-the-middle) matches by its path inside the package.
 * CommonJS: require-in-the-middle matches a package's internal files only when the package's main entry
 * resolves, and the SDK has no CommonJS main (`exports["."].require` points at a file it does not ship). So the
 * client is hooked by the ids it is required by — `@modelcontextprotocol/sdk/client/index.js`, and its file inside
 * the package for the SDK's own requires — which match every copy, a dependency's nested one included; and by
 * absolute path as resolved from the working directory, the main script and this package, for a copy outside
 * node_modules. Copies loaded before `enable()` are patched at once.
 * 2.x has a CommonJS main (`dist/index.cjs`, ESM `dist/index.mjs`), whose `Client` export is hooked by package name
 * as usual: every copy, a nested one included.
 */
import { diag } from '@opentelemetry/api';
import {
  InstrumentationBase,
  InstrumentationNodeModuleDefinition,
  InstrumentationNodeModuleFile,
  isWrapped,
} from '@opentelemetry/instrumentation';
import { realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Hook } from 'require-in-the-middle';
import { checkedCaptureConfig } from './capture-config';
import { ToolCallTracer } from './tool-call-tracer';
import { MCP_CLIENT_V2, MCP_SDK_V1, type McpClientShape } from './mcp-client-shape';
import type { McpClientInstrumentationConfig } from './types';
import { PACKAGE_NAME, PACKAGE_VERSION } from './version';
import { safeDiag } from './safe-diag';

/** 1.2.0 split the package into dist/esm and dist/cjs, the files hooked here; 1.0 and 1.1 need instrumentMcpClient. */
const SUPPORTED_VERSIONS = ['>=1.2.0 <2'];
const CLIENT_ENTRY = '@modelcontextprotocol/sdk/client/index.js';
const COMMONJS_CLIENT_FILE = '@modelcontextprotocol/sdk/dist/cjs/client/index.js';
const COMMONJS_CLIENT_PATH_SUFFIX = `/node_modules/${COMMONJS_CLIENT_FILE}`;
const V2_PACKAGE = '@modelcontextprotocol/client';
const V2_SUPPORTED_VERSIONS = ['>=2.0.0 <3'];
const V2_COMMONJS_ENTRY_SUFFIX = `/node_modules/${V2_PACKAGE}/dist/index.cjs`;

/** A CommonJS client module in `require.cache`: any copy of the SDK, or one of the paths resolved here. */
const isCommonJsClient = (path: string, resolved: readonly string[]): boolean =>
  resolved.includes(path) || path.replaceAll('\\', '/').endsWith(COMMONJS_CLIENT_PATH_SUFFIX);
const PATCHED_METHODS = ['callTool', 'request', '_onrequest'] as const;

type ClientMethod = (this: object, ...args: unknown[]) => unknown;

interface ClientModule {
  Client?: { prototype: Record<string, unknown> };
}

/**
 * The main script's directory. Under `--require`, `require.main` is not set yet, but the script about to run is
 * `process.argv[1]`, which Node resolves through symlinks (an npm bin link) before loading it.
 */
function mainScriptDir(): string | null {
  const script = require.main?.filename ?? process.argv[1];
  if (script === undefined) return null;
  try {
    return dirname(realpathSync(script));
  } catch {
    return dirname(resolve(script));
  }
}

/** Where the CommonJS client entry resolves from the places a host's `require` would look. */
function commonJsClientPaths(): string[] {
  // No __dirname in an ES module bundle (esbuild --format=esm), where this file is inlined.
  const from = [process.cwd(), mainScriptDir(), typeof __dirname === 'string' ? __dirname : null];
  const paths = new Set<string>();
  for (const dir of from) {
    if (dir === null) continue;
    try {
      paths.add(require.resolve(CLIENT_ENTRY, { paths: [dir] }));
    } catch {
      // not installed where this directory looks
    }
  }
  return [...paths];
}

export class McpClientInstrumentation extends InstrumentationBase<McpClientInstrumentationConfig> {
  // `declare`: InstrumentationBase calls init() and enable() from its constructor, before field initializers run.
  declare private toolCalls: Map<McpClientShape, ToolCallTracer> | undefined;
  declare private commonJsHook: Hook | undefined;
  declare private commonJsExports: ClientModule[] | undefined;

  constructor(config: McpClientInstrumentationConfig = {}) {
    super(PACKAGE_NAME, PACKAGE_VERSION, config);
  }

  /** Capture settings of the wrong kind are replaced by their defaults, with a `diag` warning. */
  override setConfig(config: McpClientInstrumentationConfig = {}): void {
    super.setConfig(checkedCaptureConfig(config));
  }

  protected init() {
    const esmClient = new InstrumentationNodeModuleFile(
      '@modelcontextprotocol/sdk/dist/esm/client/index.js',
      SUPPORTED_VERSIONS,
      (exports: ClientModule) => this.patch(exports),
      (exports: ClientModule) => this.unpatch(exports),
    );
    return [
      new InstrumentationNodeModuleDefinition(
        '@modelcontextprotocol/sdk',
        SUPPORTED_VERSIONS,
        undefined,
        undefined,
        [esmClient],
      ),
      new InstrumentationNodeModuleDefinition(
        V2_PACKAGE,
        V2_SUPPORTED_VERSIONS,
        (exports: ClientModule) => this.patch(exports, MCP_CLIENT_V2),
        (exports: ClientModule) => this.unpatch(exports),
      ),
    ];
  }

  override enable(): void {
    super.enable();
    if (this.commonJsHook !== undefined) return;
    const paths = commonJsClientPaths();
    this.commonJsExports = [];
    for (const [path, loaded] of Object.entries(require.cache)) {
      if (loaded?.loaded !== true) continue;
      if (isCommonJsClient(path, paths)) this.patchCommonJs(loaded.exports as ClientModule, MCP_SDK_V1);
      // OpenTelemetry's hook patches 2.x as it is required, not a copy required before.
      else if (path.replaceAll('\\', '/').endsWith(V2_COMMONJS_ENTRY_SUFFIX))
        this.patchCommonJs(loaded.exports as ClientModule, MCP_CLIENT_V2);
    }
    this.commonJsHook = new Hook([CLIENT_ENTRY, COMMONJS_CLIENT_FILE, ...paths], (exports) => {
      this.patchCommonJs(exports as ClientModule, MCP_SDK_V1);
      return exports;
    });
  }

  override disable(): void {
    super.disable();
    this.commonJsHook?.unhook();
    this.commonJsHook = undefined;
    for (const exports of this.commonJsExports ?? []) this.unpatch(exports);
    this.commonJsExports = [];
  }

  private patchCommonJs(exports: ClientModule, shape: McpClientShape): ClientModule {
    (this.commonJsExports ??= []).push(exports);
    return this.patch(exports, shape);
  }

  /** One tracer per SDK line, for the clients of that line. */
  private tracerOfToolCalls(shape: McpClientShape): ToolCallTracer {
    this.toolCalls ??= new Map();
    let toolCalls = this.toolCalls.get(shape);
    if (toolCalls === undefined) {
      toolCalls = new ToolCallTracer(
        () => this.tracer,
        () => this.getConfig(),
        shape,
      );
      this.toolCalls.set(shape, toolCalls);
    }
    return toolCalls;
  }

  private patch(exports: ClientModule, shape: McpClientShape = MCP_SDK_V1): ClientModule {
    const prototype = exports?.Client?.prototype;
    if (prototype === undefined || typeof prototype['callTool'] !== 'function') {
      safeDiag(() => diag.debug('@errata/sdk: the MCP SDK Client has no callTool to patch'));
      return exports;
    }
    const toolCalls = this.tracerOfToolCalls(shape);
    for (const method of PATCHED_METHODS) if (isWrapped(prototype[method])) this._unwrap(prototype, method);
    this._wrap(prototype, 'callTool', (original) => toolCalls.wrapCallTool(original as ClientMethod));
    this._wrap(prototype, 'request', (original) => toolCalls.wrapRequest(original as ClientMethod));
    // Protocol's, where the client receives its server's requests (private in SDK 1.x and 2.x: absent, skipped).
    if (typeof prototype['_onrequest'] === 'function') {
      this._wrap(prototype, '_onrequest', (original) => toolCalls.wrapOnRequest(original as ClientMethod));
    }
    return exports;
  }

  private unpatch(exports: ClientModule): void {
    const prototype = exports?.Client?.prototype;
    if (prototype === undefined) return;
    for (const method of PATCHED_METHODS) if (isWrapped(prototype[method])) this._unwrap(prototype, method);
  }
}
