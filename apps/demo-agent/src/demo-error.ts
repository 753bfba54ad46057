/** A failure the demo explains in one message, without a stack trace. */
export class DemoError extends Error {
  override readonly name = 'DemoError';
}

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
