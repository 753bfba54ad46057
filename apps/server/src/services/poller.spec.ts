import { describe, expect, it } from 'vitest';
import { Poller } from './poller';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Poller', () => {
  it('given runs that keep failing, waits twice as long after each, and wake() does not cut the wait short', async () => {
    const waits: number[] = [];
    let runs = 0;
    const poller = new Poller(
      10,
      async () => {
        runs++;
        throw new Error('canceling statement due to statement timeout');
      },
      (_error, retryInMs) => waits.push(retryInMs),
    );
    poller.start();
    const waking = setInterval(() => poller.wake(), 2); // as ingest wakes the projector with every request
    await sleep(400);
    clearInterval(waking);
    await poller.stop();
    // 10 ms doubled: 20, 40, 80, 160 … — about five runs in 400 ms, where every wake would have been one.
    expect(waits.slice(0, 4)).toEqual([20, 40, 80, 160]);
    expect(runs).toBeLessThanOrEqual(6);
  });

  it('given a run that succeeds after a failure, wakes at once again; stop() cuts a backoff short', async () => {
    let runs = 0;
    let failing = true;
    const poller = new Poller(
      1_000,
      async () => {
        runs++;
        if (failing) throw new Error('database restarting');
      },
      () => undefined,
    );
    poller.start();
    await sleep(100);
    expect(runs).toBe(1);
    failing = false;
    poller.wake(); // during the backoff (2 s): not cut short
    await sleep(300);
    expect(runs).toBe(1);
    await sleep(1_800); // the backoff is over: the run succeeds, and the next waits the interval (1 s)
    expect(runs).toBe(2);
    poller.wake(); // no failure in a row now: at once
    await sleep(100);
    expect(runs).toBe(3);
    failing = true;
    poller.wake();
    await sleep(100);
    expect(runs).toBe(4);
    const stopping = Date.now();
    await poller.stop(); // in the middle of a 2 s backoff
    expect(Date.now() - stopping).toBeLessThan(500);
  });

  it('never waits less than its interval after a failure', async () => {
    const waits: number[] = [];
    const poller = new Poller(
      60_000,
      async () => {
        throw new Error('x');
      },
      (_error, retryInMs) => waits.push(retryInMs),
    );
    poller.start();
    await sleep(10);
    await poller.stop();
    expect(waits).toEqual([60_000]);
  });

  it('tells the run in flight that stop() was called, so that a run over a backlog ends after its step; a new start runs unstopped', async () => {
    const signals: AbortSignal[] = [];
    let release: () => void = () => undefined;
    const poller = new Poller(
      60_000,
      (stopping) => {
        signals.push(stopping);
        return new Promise<void>((resolve) => (release = resolve)); // a step still in flight when stop() is called
      },
      () => undefined,
    );
    poller.start();
    await sleep(10);
    const stopped = poller.stop();
    expect(signals[0]?.aborted).toBe(true);
    release();
    await stopped;
    poller.start();
    await sleep(10);
    expect(signals[1]?.aborted).toBe(false);
    const stoppedAgain = poller.stop();
    release();
    await stoppedAgain;
  });
});
