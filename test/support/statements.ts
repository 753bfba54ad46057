/** Counting the statements a server in the test's process sends PostgreSQL on some work's behalf. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from 'pg';

/**
 * `run`'s result and the statements pg's clients sent for it (BEGIN and COMMIT count), with their texts. Only those sent
 * from `run`'s asynchronous context count: a poller of the same process running meanwhile does not.
 */
export async function statementsOf<T>(
  run: () => Promise<T>,
): Promise<{ result: T; statements: number; texts: string[] }> {
  const query = Client.prototype.query;
  const counting = new AsyncLocalStorage<true>();
  const texts: string[] = [];
  Client.prototype.query = function (this: Client, ...args: unknown[]) {
    if (counting.getStore() === true)
      texts.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown })?.text));
    return (query as (...args: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    const result = await counting.run(true, run);
    return { result, statements: texts.length, texts };
  } finally {
    Client.prototype.query = query;
  }
}
