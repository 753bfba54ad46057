/** Counting the statements a server in the test's process sends PostgreSQL on some work's behalf. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from 'pg';

/**
 * `run`'s result and the statements pg's clients sent for it (BEGIN and COMMIT count). Only those sent from `run`'s
 * asynchronous context count: a poller of the same process running meanwhile does not.
 */
export async function statementsOf<T>(run: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const query = Client.prototype.query;
  const counting = new AsyncLocalStorage<true>();
  let statements = 0;
  Client.prototype.query = function (this: Client, ...args: unknown[]) {
    if (counting.getStore() === true) statements++;
    return (query as (...args: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    return { result: await counting.run(true, run), statements };
  } finally {
    Client.prototype.query = query;
  }
}
