/**
 * Simulated upstream trouble must be reproducible (a test asserts the demo's exact report figures), so flaky
 * behaviour is driven by how often this process has seen a key, never by chance or by the clock.
 */
export class AttemptCounter {
  private readonly counts = new Map<string, number>();

  /** The 1-based number of this attempt for `key`. */
  next(key: string): number {
    const attempt = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, attempt);
    return attempt;
  }
}
