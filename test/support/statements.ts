/** Counting the statements a server in the test's process sends PostgreSQL on some work's behalf. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from 'pg';

/** A statement sent, with its parameters' values. */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * `run`'s result and the statements pg's clients sent for it (BEGIN and COMMIT count). Only those sent from `run`'s
 * asynchronous context count: a poller of the same process running meanwhile does not.
 */
export async function statementsOf<T>(
  run: () => Promise<T>,
): Promise<{ result: T; statements: number; sent: Statement[] }> {
  const query = Client.prototype.query;
  const counting = new AsyncLocalStorage<true>();
  const sent: Statement[] = [];
  Client.prototype.query = function (this: Client, ...args: unknown[]) {
    if (counting.getStore() === true) sent.push(statementOf(args));
    return (query as (...args: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    const result = await counting.run(true, run);
    return { result, statements: sent.length, sent };
  } finally {
    Client.prototype.query = query;
  }
}

/** `query(text, values)` or `query({ text, values })`. */
function statementOf([config, values]: unknown[]): Statement {
  if (typeof config === 'string') return { text: config, values: (values as unknown[] | undefined) ?? [] };
  const { text, values: own } = config as { text: string; values?: unknown[] };
  return { text, values: (values as unknown[] | undefined) ?? own ?? [] };
}
