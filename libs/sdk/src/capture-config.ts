/**
 * What the SDK sends of texts and arguments (DOMAIN.md §6). `startErrata` records the settings it was given, so
 * that clients wrapped with `instrumentMcpClient` and the agent API follow them too.
 */
import { DEFAULT_TEXT_LIMIT_BYTES } from '@errata/domain';
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

/** The UTF-8 byte limit of every text sent: the configured one when it is a positive number, else the server's default. */
export function textLimitBytes(config: ToolCallCaptureConfig): number {
  const limit = config.textLimitBytes;
  return limit !== undefined && Number.isFinite(limit) && limit > 0 ? limit : DEFAULT_TEXT_LIMIT_BYTES;
}
