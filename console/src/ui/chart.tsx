/**
 * Charts with Chart.js (only the parts used are registered, so the bundle carries nothing else).
 * Each chart is a labelled image for assistive technology, with its numbers as a table beside it
 * and a CSV download of exactly those numbers.
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';
import { downloadCsv, type Table } from './csv';

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Legend,
  Tooltip,
);

const PALETTE = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2'];

interface Series {
  label: string;
  values: number[];
}

interface ChartProps {
  title: string;
  kind: 'bar' | 'line';
  labels: string[];
  series: Series[];
  stacked?: boolean;
  /** The values are dollars: the axis says so, to three significant digits. */
  dollars?: boolean;
  /** The CSV file's name. */
  file: string;
}

const textColor = () => getComputedStyle(document.documentElement).getPropertyValue('--fg').trim() || '#222';

const dollarTick = (v: string | number) => `$${Number(v).toLocaleString(undefined, { maximumSignificantDigits: 3 })}`;

function configOf({ kind, labels, series, stacked, dollars }: ChartProps): ChartConfiguration {
  const color = textColor();
  return {
    type: kind,
    data: {
      labels,
      datasets: series.map((s, i) => ({
        label: s.label,
        data: s.values,
        backgroundColor: PALETTE[i % PALETTE.length],
        borderColor: PALETTE[i % PALETTE.length],
      })),
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      color,
      scales: {
        x: { stacked, ticks: { color } },
        y: { stacked, beginAtZero: true, ticks: { color, ...(dollars ? { callback: dollarTick } : {}) } },
      },
    },
  };
}

const tableOf = (labels: string[], series: Series[], first = 'period'): Table => ({
  columns: [first, ...series.map((s) => s.label)],
  rows: labels.map((l, i) => [l, ...series.map((s) => s.values[i] ?? 0)]),
});

export function ChartView(props: ChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const chart = new Chart(canvas.current!, configOf(props));
    return () => chart.destroy();
  }, [JSON.stringify([props.labels, props.series, props.kind, props.stacked, props.dollars])]);
  const table = tableOf(props.labels, props.series);
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div class="chart-box">
        <canvas ref={canvas} role="img" aria-label={`${props.title}: chart; the numbers are in the table below`} />
      </div>
      <details>
        <summary>Numbers</summary>
        <DataTable table={table} />
      </details>
      <button type="button" onClick={() => downloadCsv(props.file, table)}>
        Download CSV<span class="visually-hidden">: {props.title}</span>
      </button>
    </figure>
  );
}

function DataTable({ table }: { table: Table }) {
  return (
    <div class="scroll">
      <table>
        <thead>
          <tr>
            {table.columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {table.rows.map((r, i) => (
            <tr key={i}>
              {r.map((v, j) => (
                <td key={j}>{typeof v === 'number' ? Number(v.toFixed(4)) : v}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
