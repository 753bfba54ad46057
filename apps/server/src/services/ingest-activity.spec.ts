import { describe, expect, it } from 'vitest';
import { IngestActivity } from './ingest-activity';

const settled = async (promise: Promise<void>) => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  return done;
};

describe('IngestActivity.quiet', () => {
  it('resolves at once when no request is in flight', async () => {
    expect(await settled(new IngestActivity().quiet(60_000))).toBe(true);
  });

  it('waits until the last request in flight ends', async () => {
    const activity = new IngestActivity();
    activity.begin();
    activity.begin();
    const quiet = activity.quiet(60_000);
    activity.end();
    expect(await settled(quiet)).toBe(false);
    activity.end();
    expect(await settled(quiet)).toBe(true);
    expect(activity.requestsInFlight).toBe(0);
  });

  it('stops waiting after the longest wait, with requests still in flight', async () => {
    const activity = new IngestActivity();
    activity.begin();
    const started = Date.now();
    await activity.quiet(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(activity.requestsInFlight).toBe(1);
  });

  it('stops waiting when the signal aborts, and does not wait at all with 0 or an aborted signal', async () => {
    const activity = new IngestActivity();
    activity.begin();
    const shutdown = new AbortController();
    const quiet = activity.quiet(60_000, shutdown.signal);
    expect(await settled(quiet)).toBe(false);
    shutdown.abort();
    expect(await settled(quiet)).toBe(true);
    expect(await settled(activity.quiet(60_000, shutdown.signal))).toBe(true);
    expect(await settled(activity.quiet(0))).toBe(true);
  });
});
