/**
 * The diagrams visualize_plan writes, drawn on the server as inline SVG so a page shows them with
 * script off and under a CSP without inline styles. The figure keeps the Mermaid source below the
 * drawing, for anyone who wants it in another renderer; text this renderer does not read (outside
 * draw.ts's subset, or past its bounds) is shown as source only, with a note. Nothing here throws
 * into the page.
 */
import { clip } from "../../../core/text";
import { flowchartSvg } from "./flowchart";
import { ganttSvg, layoutGantt } from "./gantt";
import { layoutFlowchart } from "./layout";
import { MAX_SOURCE_CHARS, parseMermaid, type Diagram } from "./parse";
import { count, formatNumber } from "./text";

export interface MermaidFigureProps {
  /** The Mermaid text, as visualize_plan returns it. */
  mermaid: string;
  /** What the diagram shows ("Dependencies"): the drawing's accessible name, and its ids' prefix. */
  label: string;
  /** Tells apart two figures with the same label on one page. */
  index?: number;
}

/** A one-line summary for the drawing's title: "5 nodes, 5 arrows (3 on the critical path) in 2 groups". */
export function summary(d: Diagram): string {
  if (d.kind === "gantt") {
    const start = Math.min(...d.tasks.map((t) => t.start));
    const end = Math.max(...d.tasks.map((t) => t.end));
    const sections = new Set(d.tasks.map((t) => t.section).filter((s) => s >= 0)).size;
    const crit = d.tasks.filter((t) => t.crit).length;
    return (
      count(d.tasks.length, "task") +
      (sections > 0 ? ` in ${count(sections, "section")}` : "") +
      (d.tasks.length > 0 ? `, ${formatNumber(end - start)} h from start to finish` : "") +
      (crit > 0 ? `, ${crit} on the critical path` : "")
    );
  }
  const critical = d.edges.filter((e) => e.critical).length;
  return (
    `${count(d.nodes.length, "node")}, ${count(d.edges.length, "arrow")}` +
    (critical > 0 ? ` (${critical} on the critical path)` : "") +
    (d.groups.length > 0 ? ` in ${count(d.groups.length, "group")}` : "")
  );
}

/** Ids inside the SVG start with this: letters and digits of the label kept, anything else spelled out, so two labels never share it. */
export function idPrefix(label: string, index?: number): string {
  let slug = "";
  for (const ch of [...label.slice(0, 64)].slice(0, 32)) {
    const c = ch.codePointAt(0)!;
    if ((c >= 48 && c <= 57) || (c >= 97 && c <= 122)) slug += ch;
    else if (c >= 65 && c <= 90) slug += ch.toLowerCase();
    else if (c === 32) slug += "-";
    else slug += `_${c.toString(16)}_`;
  }
  return `mm${index ?? ""}-${slug}`;
}

function drawing(props: MermaidFigureProps) {
  const parsed = parseMermaid(props.mermaid);
  if (!parsed.ok) return null;
  const d = parsed.diagram;
  const ids = { prefix: idPrefix(props.label, props.index), title: `${props.label}: ${summary(d)}` };
  return d.kind === "gantt" ? ganttSvg(d, layoutGantt(d), ids) : flowchartSvg(d, layoutFlowchart(d), ids);
}

export function MermaidFigure(props: MermaidFigureProps) {
  let svg: ReturnType<typeof drawing> = null;
  try {
    svg = drawing(props);
  } catch (err) {
    // A bug here must cost the page a picture, not the page.
    console.error("mermaid figure", err instanceof Error ? err.message : String(err));
  }
  if (!svg) {
    return (
      <figure class="diagram diagram-fallback">
        <p class="muted">This diagram could not be drawn here; its Mermaid source:</p>
        <pre>
          <code>{clip(props.mermaid, MAX_SOURCE_CHARS)}</code>
        </pre>
      </figure>
    );
  }
  return (
    <figure class="diagram">
      {svg}
      <details>
        <summary>Mermaid source</summary>
        <pre>
          <code>{props.mermaid}</code>
        </pre>
      </details>
    </figure>
  );
}
