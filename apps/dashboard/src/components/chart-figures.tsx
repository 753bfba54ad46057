import { formatCount, formatDateTime, formatPercent } from '../format';
import type { ChartProps } from './chart';
import { ScrollBox } from './scroll-box';

/**
 * A chart's figures as a table, behind a disclosure under it: what a screen reader reads for the canvas, and what a
 * reader who cannot tell the series' colours apart, or wants the exact numbers, opens.
 */
export function ChartFigures({ title, x, series, time, percent }: ChartProps) {
  const format = (value: number | null) =>
    value === null ? '—' : percent ? formatPercent(value) : formatCount(value);
  return (
    <details class="chart-figures">
      <summary>
        Show the figures<span class="visually-hidden">: {title}</span>
      </summary>
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
    </details>
  );
}
