import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProgressBar } from './progress-bar';

/** A pipe (a real stream, not a terminal): each step the bar reaches is a line of its own. */
function pipe(): { stream: NodeJS.WriteStream; lines: string[] } {
  const lines: string[] = [];
  const stream = new PassThrough();
  stream.setEncoding('utf8').on('data', (text: string) => lines.push(text));
  return { stream: stream as unknown as NodeJS.WriteStream, lines };
}

describe('ProgressBar off a terminal', () => {
  it('prints a line per tenth reached, and its 100% line once', () => {
    const { stream, lines } = pipe();
    const bar = new ProgressBar('deleting traces', 4, stream);
    for (let done = 1; done <= 4; done++) bar.update(done);
    bar.finish(4);
    expect(lines.map((line) => line.replace(/ \(\d+\/s\)\n$/, ''))).toEqual([
      'deleting traces [########----------------------] 25% 1/4',
      'deleting traces [###############---------------] 50% 2/4',
      'deleting traces [#######################-------] 75% 3/4',
      'deleting traces [##############################] 100% 4/4',
    ]);
  });

  it('prints the final figure when the last step was not reached (fewer done than planned)', () => {
    const { stream, lines } = pipe();
    const bar = new ProgressBar('rebuilding', 10, stream);
    bar.finish(7);
    expect(lines.at(-1)).toMatch(/^rebuilding \[#+-+\] 70% 7\/10/);
  });
});
