/**
 * A Gantt chart as inline SVG: a row per task under its section's heading, a bar from its start to
 * its end (the parser already placed each task after the ones it names), critical bars in the
 * critical colour, and an hour axis. visualize_plan draws one hour of effort as one second
 * (`dateFormat X`), so the axis reads the chart's seconds as hours.
 */
import type { Gantt, GanttTask } from "./parse";
import { clipToWidth, formatNumber } from "./text";

const MARGIN = 12;
const NAME_W = 280;
const TITLE_H = 28;
const AXIS_H = 22;
const ROW_H = 22;
const SECTION_H = 24;
const BAR_H = 14;
const PX_PER_HOUR = 12;
const CHART_MIN = 480;
const CHART_MAX = 4800;
/** Tick spacings in hours: days (8) and weeks (40) of effort once the chart is long enough. */
const STEPS = [1, 2, 4, 8, 16, 40, 80, 160, 400, 800, 1600, 4000, 8000, 16_000, 40_000, 80_000, 160_000, 400_000, 800_000, 1.6e6, 4e6, 8e6, 1.6e7, 4e7, 8e7, 1.6e8, 4e8, 8e8, 1.6e9];
/** The least room between two ticks, for their labels. */
const TICK_PX = 80;

/**
 * The axis's ticks for a chart `total` hours long drawn `width` pixels wide: 0, then the smallest
 * step that leaves TICK_PX between labels, up to the first tick at or past the end.
 */
export function hourTicks(total: number, width: number): number[] {
  const span = Math.max(total, 1);
  const step = STEPS.find((s) => (s / span) * width >= TICK_PX) ?? STEPS[STEPS.length - 1]!;
  const last = Math.max(1, Math.ceil(span / step));
  return Array.from({ length: last + 1 }, (_, i) => i * step);
}

export type GanttRow = { kind: "section"; name: string; y: number } | { kind: "task"; task: GanttTask; y: number; x: number; w: number };

export interface GanttLayout {
  width: number;
  height: number;
  /** The first task's start, where the axis's 0 is; hours from there to the last end. */
  origin: number;
  total: number;
  ticks: Array<{ hours: number; x: number }>;
  rows: GanttRow[];
  /** Where the rows begin and end, for the grid lines. */
  top: number;
  bottom: number;
}

export function layoutGantt(chart: Gantt): GanttLayout {
  const origin = chart.tasks.length > 0 ? Math.min(...chart.tasks.map((t) => t.start)) : 0;
  const total = chart.tasks.length > 0 ? Math.max(...chart.tasks.map((t) => t.end)) - origin : 0;
  const chartW = Math.min(CHART_MAX, Math.max(CHART_MIN, total * PX_PER_HOUR));
  const hours = hourTicks(total, chartW);
  const span = hours[hours.length - 1]!;
  const left = MARGIN + NAME_W;
  const xOf = (h: number) => Math.round((left + ((h - origin) / span) * chartW) * 10) / 10;
  const top = MARGIN + (chart.title ? TITLE_H : 0) + AXIS_H;
  const rows: GanttRow[] = [];
  let y = top;
  let section = -1;
  for (const task of chart.tasks) {
    if (task.section !== section && task.section >= 0) {
      rows.push({ kind: "section", name: chart.sections[task.section]!, y });
      y += SECTION_H;
    }
    section = task.section;
    const x = xOf(task.start);
    rows.push({ kind: "task", task, y, x, w: Math.round((xOf(task.end) - x) * 10) / 10 });
    y += ROW_H;
  }
  return {
    // Room on the right for half of the last tick's label.
    width: left + chartW + MARGIN + 24,
    height: y + MARGIN,
    origin,
    total,
    ticks: hours.map((h) => ({ hours: h, x: xOf(origin + h) })),
    rows,
    top,
    bottom: y,
  };
}

export function ganttSvg(chart: Gantt, layout: GanttLayout, ids: { prefix: string; title: string }) {
  const axisY = MARGIN + (chart.title ? TITLE_H : 0) + AXIS_H - 8;
  return (
    <svg class="mm-svg" viewBox={`0 0 ${layout.width} ${layout.height}`} width={layout.width} height={layout.height} role="img" aria-labelledby={`${ids.prefix}-title`}>
      <title id={`${ids.prefix}-title`}>{ids.title}</title>
      {chart.title ? (
        <text class="mm-heading" x={MARGIN} y={MARGIN + 16}>
          {clipToWidth(chart.title, layout.width - 2 * MARGIN)}
        </text>
      ) : null}
      {layout.rows.map((r) =>
        r.kind === "section" ? (
          <g class="mm-section">
            <title>{r.name}</title>
            <rect x={MARGIN} y={r.y + 2} width={layout.width - 2 * MARGIN} height={SECTION_H - 4} rx="3" />
            <text x={MARGIN + 6} y={r.y + SECTION_H / 2 + 4}>
              {clipToWidth(r.name, layout.width - 2 * MARGIN - 12)}
            </text>
          </g>
        ) : null,
      )}
      <g class="mm-axis">
        {layout.ticks.map((t) => (
          <>
            <line x1={t.x} y1={layout.top} x2={t.x} y2={layout.bottom} class="mm-grid" />
            <text x={t.x} y={axisY} text-anchor="middle">{`${formatNumber(t.hours)} h`}</text>
          </>
        ))}
      </g>
      {layout.rows.map((r) => {
        if (r.kind !== "task") return null;
        const t = r.task;
        return (
          <g class="mm-task">
            <title>{`${t.name}: from ${formatNumber(t.start - layout.origin)} h to ${formatNumber(t.end - layout.origin)} h (${formatNumber(t.end - t.start)} h)${t.crit ? ", on the critical path" : ""}`}</title>
            <text x={MARGIN + 12} y={r.y + ROW_H / 2 + 4} class="mm-ink">
              {clipToWidth(t.name, NAME_W - 24)}
            </text>
            {r.w > 0 ? <rect x={r.x} y={r.y + (ROW_H - BAR_H) / 2} width={Math.max(2, r.w)} height={BAR_H} rx="3" class={t.crit ? "mm-bar mm-bar-crit" : "mm-bar"} /> : null}
          </g>
        );
      })}
    </svg>
  );
}
