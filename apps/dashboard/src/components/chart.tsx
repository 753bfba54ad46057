/**
 * Charts drawn by Apache ECharts (only the parts used are bundled). Colours come from the page's CSS variables,
 * so the charts follow the light or dark theme. The plotted values are also on the figure (`data-series`), the
 * way a test reads them, and in a table under it (`ChartFigures`), the way a person who cannot see the canvas or tell
 * its colours apart reads them. Each series of a line chart has its own symbol too.
 */
import { BarChart, LineChart } from 'echarts/charts';
import { AriaComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  durationAxisInterval,
  percentAxisInterval,
  plotTop,
  timeAxisLabels,
  valueAxisSplits,
} from '../chart-layout';
import { formatDateTime, formatDuration } from '../format';
import { ChartFigures } from './chart-figures';
import { Name } from './name';

echarts.use([
  BarChart,
  LineChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  AriaComponent,
  CanvasRenderer,
]);

export interface Series {
  readonly name: string;
  readonly values: readonly (number | null)[];
}

export interface ChartProps {
  readonly title: string;
  readonly kind: 'line' | 'bar' | 'stacked-bar';
  /** Category labels (bars) or ISO bucket starts (time series). */
  readonly x: readonly string[];
  readonly series: readonly Series[];
  readonly time?: boolean;
  readonly percent?: boolean;
  /** Values are milliseconds: the axis, tooltip and figures say them as durations ("20 min"), not as counts. */
  readonly duration?: boolean;
  readonly height?: number;
  readonly testId?: string;
}

const DEFAULT_HEIGHT = 220;

/** Told apart by shape as well as colour. */
const SYMBOLS = ['circle', 'rect', 'triangle', 'diamond', 'pin', 'arrow', 'emptyCircle', 'emptyRect'];

const css = (name: string): string =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** The highest value the value axis must reach: a bucket's sum when the series are stacked. */
function highest({ kind, x, series }: ChartProps): number {
  const values = x.map((_, i) =>
    kind === 'stacked-bar'
      ? series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0)
      : Math.max(0, ...series.map((s) => s.values[i] ?? 0)),
  );
  return Math.max(0, ...values);
}

/** `hidden`: the series the reader switched off (in the legend, or with the keys under it). */
function optionOf(props: ChartProps, hidden: ReadonlySet<string>): echarts.EChartsCoreOption {
  const text = css('--text-muted') || '#666';
  const grid = css('--border') || '#ddd';
  const palette = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => css(`--chart-${n}`)).filter((c) => c !== '');
  const axisLabel = props.time
    ? { color: text, formatter: timeAxisLabels(props.x) }
    : { color: text, interval: 0, rotate: props.x.length > 6 ? 30 : 0 };
  const splits = valueAxisSplits(props.height ?? DEFAULT_HEIGHT, props.series.length);
  // A duration axis ends on its last whole step: left to ECharts, its end got a label of its own over the step's.
  const durationStep = props.duration ? durationAxisInterval(highest(props), splits) : undefined;
  const valueFormat = props.percent
    ? (value: number) => `${(value * 100).toFixed(1)}%`
    : props.duration
      ? formatDuration
      : (value: number) => value.toLocaleString('en-US');
  return {
    color: palette,
    animation: false,
    aria: { enabled: true, label: { description: props.title } },
    // A time axis' label is centred on its bucket: one on a bucket at the right edge needs half its width there.
    grid: {
      left: 8,
      right: props.time ? 36 : 16,
      top: plotTop(props.series.length),
      bottom: 8,
      containLabel: true,
    },
    tooltip: {
      trigger: 'axis',
      valueFormatter: (value: unknown) => (typeof value === 'number' ? valueFormat(value) : '—'),
    },
    // One line of legend, paged when it does not fit (a grouping by tool names long server/tool keys).
    legend:
      props.series.length > 1
        ? {
            type: 'scroll',
            top: 0,
            textStyle: { color: text, width: 160, overflow: 'truncate' },
            tooltip: { show: true },
            pageTextStyle: { color: text },
            selected: Object.fromEntries(
              props.series.map((series) => [series.name, !hidden.has(series.name)]),
            ),
          }
        : { show: false },
    xAxis: {
      type: 'category',
      data: [...props.x],
      axisLabel,
      axisLine: { lineStyle: { color: grid } },
      // The tooltip's heading is the bucket's start, which the axis labels give without a zone: said in full, UTC.
      ...(props.time
        ? {
            axisPointer: {
              label: { formatter: ({ value }: { value: unknown }) => formatDateTime(String(value)) },
            },
          }
        : {}),
    },
    yAxis: {
      type: 'value',
      splitNumber: splits,
      interval: props.percent ? percentAxisInterval(splits) : durationStep,
      minInterval: props.percent ? undefined : 1,
      max: props.percent ? 1 : durationStep && Math.ceil(highest(props) / durationStep) * durationStep,
      axisLabel: {
        color: text,
        formatter: props.percent
          ? (v: number) => `${Math.round(v * 100)}%`
          : props.duration
            ? formatDuration
            : undefined,
      },
      splitLine: { lineStyle: { color: grid } },
    },
    series: props.series.map((series, i) => ({
      name: series.name,
      symbol: SYMBOLS[i % SYMBOLS.length],
      type: props.kind === 'line' ? 'line' : 'bar',
      stack: props.kind === 'stacked-bar' ? 'total' : undefined,
      data: [...series.values],
      // A lone value between gaps (a bucket with calls among empty ones) is drawn only as its symbol.
      showSymbol: true,
      showAllSymbol: props.x.length <= 48 ? true : 'auto',
      symbolSize: props.x.length <= 48 ? 5 : 3,
      connectNulls: false,
      barMaxWidth: 32,
      emphasis: { focus: 'series' },
    })),
  };
}

export function Chart(props: ChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  // Kept here, not in ECharts alone: every render sets the option anew, which forgot a series switched off.
  const [hidden, setHidden] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    const element = host.current!;
    chart.current = echarts.init(element, undefined, { renderer: 'canvas' });
    chart.current.on('legendselectchanged', (event) => {
      const { selected } = event as { selected: Record<string, boolean> };
      setHidden(new Set(Object.keys(selected).filter((name) => !selected[name])));
    });
    const resize = new ResizeObserver(() => chart.current?.resize());
    resize.observe(element);
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    const recolour = () =>
      chart.current?.setOption(optionOf(propsRef.current, hiddenRef.current), { notMerge: true });
    scheme.addEventListener('change', recolour);
    return () => {
      scheme.removeEventListener('change', recolour);
      resize.disconnect();
      chart.current?.dispose();
      chart.current = null;
    };
  }, []);
  const propsRef = useRef(props);
  propsRef.current = props;
  const hiddenRef = useRef(hidden);
  hiddenRef.current = hidden;
  useEffect(() => {
    chart.current?.setOption(optionOf(props, hidden), { notMerge: true });
  });
  const toggle = (name: string) => {
    const next = new Set(hidden);
    if (!next.delete(name)) next.add(name);
    setHidden(next);
  };
  const data = Object.fromEntries(props.series.map((series) => [series.name, series.values]));
  return (
    <figure
      class="chart"
      data-chart={props.testId}
      data-x={JSON.stringify(props.x)}
      data-series={JSON.stringify(data)}
      data-hidden={JSON.stringify([...hidden])}
    >
      <figcaption>{props.title}</figcaption>
      {/* The canvas legend answers a mouse only: these keys switch the same series, shown once one has focus. */}
      {props.series.length > 1 && (
        <div class="chart-series-keys" role="group" aria-label={`Series shown in ${props.title}`}>
          {props.series.map((series) => (
            <button
              type="button"
              key={series.name}
              aria-pressed={!hidden.has(series.name)}
              onClick={() => toggle(series.name)}
            >
              <Name>{series.name}</Name>
            </button>
          ))}
        </div>
      )}
      <div
        ref={host}
        class="chart-canvas"
        style={{ height: `${props.height ?? DEFAULT_HEIGHT}px` }}
        role="img"
        aria-label={props.title}
      />
      <ChartFigures {...props} />
    </figure>
  );
}
