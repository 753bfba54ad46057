/**
 * A progress bar on stderr: redrawn in place on a terminal, a line per tenth of the way otherwise
 * (CI logs, pipes), so long work always shows that it moves.
 */
export class ProgressBar {
  private lastTenth = -1;
  private readonly startedAt = Date.now();

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  update(done: number): void {
    const fraction = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const seconds = (Date.now() - this.startedAt) / 1000;
    const rate = seconds > 0 ? Math.round(done / seconds) : 0;
    const text = `${this.label} ${bar(fraction)} ${Math.floor(fraction * 100)}% ${done}/${this.total} (${rate}/s)`;
    if (this.stream.isTTY) {
      this.stream.write(`\r${text}`);
      return;
    }
    const tenth = Math.floor(fraction * 10);
    if (tenth > this.lastTenth) {
      this.lastTenth = tenth;
      this.stream.write(`${text}\n`);
    }
  }

  /** The final figure, once: off a terminal, a bar that already printed its 100% line prints no second one. */
  finish(done: number): void {
    if (this.stream.isTTY || this.lastTenth < 10) {
      this.lastTenth = -1;
      this.update(done);
    }
    if (this.stream.isTTY) this.stream.write('\n');
  }
}

function bar(fraction: number, width = 30): string {
  const filled = Math.round(fraction * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}
