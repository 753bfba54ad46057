/**
 * What the SDK sends of texts and arguments (DOMAIN.md §6). `startErrata` records the settings it was given, so
 * that clients wrapped with `instrumentMcpClient` and the agent API follow them too.
 */
import { DEFAULT_TEXT_LIMIT_BYTES } from '@errata/domain';
import { BOOLEAN, optionValue, POSITIVE_INTEGER } from './option-value';
import type { ToolCallCaptureConfig } from './types';

let running: ToolCallCaptureConfig = {};

export function setRunningCaptureConfig(config: ToolCallCaptureConfig): void {
  running = config;
}

/** The settings of the running `startErrata`; the privacy defaults when none runs. */
export const runningCaptureConfig = (): ToolCallCaptureConfig => running;

/**
 * Settings `instrumentMcpClient(client, config)` gave one client. They win over those of whichever wrapper records
 * its calls: its own, or those of a patched class (where `instrumentMcpClient` leaves the client as it is).
 */
const clientConfigs = new WeakMap<object, ToolCallCaptureConfig>();

export function setClientCaptureConfig(client: object, config: ToolCallCaptureConfig): void {
  clientConfigs.set(client, config);
}

export const clientCaptureConfig = (client: object): ToolCallCaptureConfig | undefined =>
  clientConfigs.get(client);

/**
 * The settings as given, a wrong one replaced, with a `diag` warning, by its default: for `captureResults` and
 * `captureArguments` what `fallback` says (startErrata's environment), else false.
 */
export function checkedCaptureConfig<C extends ToolCallCaptureConfig>(
  config: C,
  fallback: (option: 'captureResults' | 'captureArguments') => boolean = () => false,
): C {
  return {
    ...config,
    captureResults: optionValue('captureResults', config.captureResults, BOOLEAN, () =>
      fallback('captureResults'),
    ),
    captureArguments: optionValue('captureArguments', config.captureArguments, BOOLEAN, () =>
      fallback('captureArguments'),
    ),
    textLimitBytes: optionValue(
      'textLimitBytes',
      config.textLimitBytes,
      POSITIVE_INTEGER,
      () => DEFAULT_TEXT_LIMIT_BYTES,
    ),
  };
}

/**
 * The UTF-8 byte limit of every text sent: the configured one when it is a positive number (rounded down, and
 * positive still), else the server's default. Read at every call: `checkedCaptureConfig` warns of a wrong one.
 */
export function textLimitBytes(config: ToolCallCaptureConfig): number {
  return POSITIVE_INTEGER.read(config.textLimitBytes) ?? DEFAULT_TEXT_LIMIT_BYTES;
}
