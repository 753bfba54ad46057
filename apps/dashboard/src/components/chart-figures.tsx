import { useState } from 'preact/hooks';
import { formatCount, formatDateTime, formatDuration, formatPercent } from '../format';
import type { ChartProps } from './chart';
import { ScrollBox } from './scroll-box';

/**
 * A chart's figures as a table, behind a disclosure under it: what a screen reader reads for the canvas, and what a
 * reader who cannot tell the series' colours apart, or wants the exact numbers, opens. The table is drawn once it is
 * opened (closed, no one reads it): drawn beforehand, the overview's six over a custom range of 1,000 days were 6,000
 * rows, 20,000 of the page's 21,600 elements.
 */
export function ChartFigures({ title, x, series, time, percent, duration }: ChartProps) {
  const format = (value: number | null) =>
    value === null
      ? '—'
      : percent
        ? formatPercent(value)
        : duration
          ? formatDuration(value)
          : formatCount(value);
  const [open, setOpen] = useState(false);
  return (
    <details class="chart-figures" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        Show the figures<span class="visually-hidden">: {title}</span>
      </summary>
      {open && (
        <ScrollBox label={title}>
          <table>
            <caption class="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">{time ? 'From' : 'Category'}</th>
                {series.map((s) => (
                  <th scope="col" class="num" key={s.name}>
                    {s.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {x.map((label, i) => (
                <tr key={i}>
                  <th scope="row">{time ? formatDateTime(label) : label}</th>
                  {series.map((s) => (
                    <td class="num" key={s.name} data-value={s.values[i] ?? ''}>
                      {format(s.values[i] ?? null)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </details>
  );
}
