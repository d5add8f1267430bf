// A small line chart over time, drawn as plain SVG (no chart library): one or more series on one value
// axis, a labelled time axis (UTC), a gap where a value is missing (a heartbeat without RSSI), a dot
// for every point so that a single one still shows. Colours come from styles.css by class (the page's
// CSP allows no inline style); every label is an SVG text node.
import { Fragment } from 'preact';

export interface Series {
  /** Shown in the legend and the points' titles. */
  name: string;
  /** A class of styles.css: the series' colour. */
  cls: string;
  /** Times in ms, values in the chart's unit; null is a gap. */
  points: { t: number; v: number | null }[];
}

const W = 640;
const H = 176;
const M = { left: 64, right: 16, top: 12, bottom: 42 };
const PLOT_W = W - M.left - M.right;
const PLOT_H = H - M.top - M.bottom;
/** The first and last moments sit this far inside the axes, so that a point there is not drawn on the axis line. */
const INSET = 8;

/** Ticks at 1, 2 or 5 × 10^k covering [lo, hi], about `n` of them; the domain widened to the outer ticks. */
export function niceTicks(lo: number, hi: number, n = 4): { ticks: number[]; lo: number; hi: number } {
  if (lo === hi) {
    const pad = Math.abs(lo) > 0 ? Math.abs(lo) * 0.1 : 1;
    lo -= pad;
    hi += pad;
  }
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const first = Math.floor(lo / step) * step;
  const last = Math.ceil(hi / step) * step;
  const ticks: number[] = [];
  for (let v = first; v <= last + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return { ticks, lo: first, hi: last };
}

const pad2 = (n: number) => String(n).padStart(2, '0');
/** `06-01 12:00` in UTC, as the console's other times are. */
export function timeLabel(ms: number): string {
  const d = new Date(ms);
  return `${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
}

/** Runs of consecutive points with a value: a line never crosses a gap. */
function runs(points: Series['points']): { t: number; v: number }[][] {
  const out: { t: number; v: number }[][] = [];
  let run: { t: number; v: number }[] = [];
  for (const p of points) {
    if (p.v === null) {
      if (run.length) out.push(run);
      run = [];
    } else run.push({ t: p.t, v: p.v });
  }
  if (run.length) out.push(run);
  return out;
}

/** `fromZero`: the value axis starts at 0 (a heap's headroom reads true only against nothing left). */
export function TimeChart({ title, unit, series, format, fromZero }: { title: string; unit: string; series: Series[]; format: (v: number) => string; fromZero?: boolean }) {
  const all = series.flatMap((s) => s.points);
  const values = all.flatMap((p) => (p.v === null ? [] : [p.v]));
  if (values.length === 0) return <p class="muted chart-empty">{title}: no values to draw.</p>;
  const times = all.map((p) => p.t);
  let t0 = Math.min(...times);
  let t1 = Math.max(...times);
  // One moment only (a single heartbeat): half an hour either side, the point in the middle.
  if (t0 === t1) {
    t0 -= 1_800_000;
    t1 += 1_800_000;
  }
  const y = niceTicks(fromZero ? Math.min(0, ...values) : Math.min(...values), Math.max(...values));
  const xOf = (t: number) => M.left + INSET + ((t - t0) / (t1 - t0)) * (PLOT_W - 2 * INSET);
  const yOf = (v: number) => M.top + PLOT_H - ((v - y.lo) / (y.hi - y.lo)) * PLOT_H;
  const xTicks = [t0, (t0 + t1) / 2, t1];
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title} over time`}>
        <title>{title}</title>
        {y.ticks.map((v) => (
          <g key={`y${v}`} class="grid">
            <line x1={M.left} x2={W - M.right} y1={yOf(v)} y2={yOf(v)} />
            <text x={M.left - 6} y={yOf(v) + 4} text-anchor="end">
              {format(v)}
            </text>
          </g>
        ))}
        <text class="axis-title" x={12} y={M.top + PLOT_H / 2} text-anchor="middle" transform={`rotate(-90 12 ${M.top + PLOT_H / 2})`}>
          {unit}
        </text>
        <line class="axis" x1={M.left} x2={W - M.right} y1={M.top + PLOT_H} y2={M.top + PLOT_H} />
        <line class="axis" x1={M.left} x2={M.left} y1={M.top} y2={M.top + PLOT_H} />
        {xTicks.map((t, i) => (
          <text key={`x${i}`} class="tick" x={xOf(t)} y={M.top + PLOT_H + 18} text-anchor={i === 0 ? 'start' : i === xTicks.length - 1 ? 'end' : 'middle'}>
            {timeLabel(t)}
          </text>
        ))}
        <text class="axis-title" x={M.left + PLOT_W / 2} y={H - 3} text-anchor="middle">
          time (UTC)
        </text>
        {series.map((s) => (
          <g key={s.name} class={`series ${s.cls}`}>
            {runs(s.points).map((run, i) =>
              run.length > 1 ? <polyline key={i} points={run.map((p) => `${xOf(p.t).toFixed(1)},${yOf(p.v).toFixed(1)}`).join(' ')} /> : <Fragment key={i} />,
            )}
            {s.points.map((p, i) =>
              p.v === null ? null : (
                <circle key={`p${i}`} cx={xOf(p.t)} cy={yOf(p.v)} r={2.5}>
                  <title>{`${timeLabel(p.t)} UTC: ${s.name} ${format(p.v)} ${unit}`}</title>
                </circle>
              ),
            )}
          </g>
        ))}
      </svg>
      <figcaption class="legend">
        {series.map((s) => (
          <span key={s.name} class={`key ${s.cls}`}>
            {s.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
