/**
 * Reads the Mermaid visualize_plan writes (src/plans/diagrams/draw.ts) into plain data the
 * dashboard draws: flowcharts (TD or LR) with subgraphs, nodes with quoted labels, `-->` and `==>`
 * arrows, classDef and class; and Gantt charts on a seconds axis (`dateFormat X`) with sections,
 * `crit` and `after`. Anything outside that subset is refused with a short reason, never guessed
 * at, so the page can show the source instead of a wrong picture.
 *
 * The text is a caller's: it is read line by line with indexOf and character tests (no regular
 * expression), and refused past MAX_SOURCE_CHARS, MAX_NODES or MAX_EDGES before any layout is done.
 */

/** Mermaid's own default maxTextSize: draw.ts never writes more. */
export const MAX_SOURCE_CHARS = 50_000;
/** Nodes of a flowchart, or tasks of a Gantt chart. */
export const MAX_NODES = 1000;
/** Arrows of a flowchart, or names after `after` in a Gantt chart. */
export const MAX_EDGES = 1000;
/** The longest id or class name read: draw.ts's are a letter and a number. */
const MAX_ID_CHARS = 64;

/** What a classDef sets, each value checked to be a plain colour, width or dash list. */
export interface ClassStyle {
  fill?: string;
  stroke?: string;
  strokeWidth?: string;
  dasharray?: string;
  /** The text's colour. */
  color?: string;
}

export interface FlowNode {
  id: string;
  /** Entity codes decoded: the text a person reads. */
  label: string;
  /** Class names in the order given (`:::name`, then `class … name` lines). */
  classes: string[];
  /** Index into Flowchart.groups: the subgraph the node was declared in. */
  group?: number;
}

export interface FlowEdge {
  from: number;
  to: number;
  /** A thick `==>` arrow: visualize_plan's critical path. */
  critical: boolean;
}

export interface FlowGroup {
  id: string;
  label: string;
  /** Node indexes, in declaration order. */
  members: number[];
}

export interface Flowchart {
  kind: "flowchart";
  /** TD: layers are rows, top to bottom; LR: layers are columns, left to right. */
  direction: "TD" | "LR";
  nodes: FlowNode[];
  edges: FlowEdge[];
  /** Subgraphs that hold at least one node. */
  groups: FlowGroup[];
  styles: Map<string, ClassStyle>;
}

export interface GanttTask {
  id: string;
  name: string;
  /** Index into Gantt.sections; -1 before the first section line. */
  section: number;
  crit: boolean;
  /** In the chart's unit, seconds, which visualize_plan uses for hours of effort. */
  start: number;
  end: number;
}

export interface Gantt {
  kind: "gantt";
  title: string;
  sections: string[];
  tasks: GanttTask[];
}

export type Diagram = Flowchart | Gantt;
export type Parsed = { ok: true; diagram: Diagram } | { ok: false; reason: string };

/** Thrown only inside this module: parseMermaid turns it into a refusal. */
class Refusal extends Error {}
const refuse = (reason: string): never => {
  throw new Refusal(reason);
};

export function parseMermaid(source: string): Parsed {
  try {
    if (source.length > MAX_SOURCE_CHARS) refuse(`longer than ${MAX_SOURCE_CHARS} characters`);
    const lines = source.split("\n");
    let first = 0;
    while (first < lines.length && isBlankOrComment(lines[first]!.trim())) first++;
    const head = (lines[first] ?? "").trim();
    const rest = lines.slice(first + 1);
    if (head === "gantt") return { ok: true, diagram: parseGantt(rest, first + 2) };
    if (head === "flowchart TD" || head === "flowchart TB") return { ok: true, diagram: parseFlowchart(rest, first + 2, "TD") };
    if (head === "flowchart LR") return { ok: true, diagram: parseFlowchart(rest, first + 2, "LR") };
    return refuse("not a flowchart TD, flowchart LR or gantt diagram");
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, reason: err.message };
    throw err;
  }
}

const isBlankOrComment = (line: string) => line === "" || line.startsWith("%%");

// ---------------------------------------------------------------------------------------------
// Words

const isIdChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

function isId(s: string): boolean {
  if (s.length === 0 || s.length > MAX_ID_CHARS) return false;
  for (let i = 0; i < s.length; i++) if (!isIdChar(s.charCodeAt(i))) return false;
  return true;
}

/** Words split on runs of spaces: linear, and no empty words. */
function words(line: string): string[] {
  return line.split(" ").filter((w) => w !== "");
}

/**
 * `#NN;` (decimal) becomes the character with that code point, once: `#35;35;` reads `#35;`.
 * A code that is not a printable character becomes U+FFFD; text that is no code stays as it is.
 */
export function decodeEntities(text: string): string {
  let out = "";
  let from = 0;
  for (let hash = text.indexOf("#"); hash >= 0; hash = text.indexOf("#", hash + 1)) {
    let i = hash + 1;
    while (i < text.length && i - hash <= 7 && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    if (i === hash + 1 || text[i] !== ";") continue;
    const code = Number(text.slice(hash + 1, i));
    const printable = code >= 32 && code <= 0x10ffff && !(code >= 0x7f && code < 0xa0) && !(code >= 0xd800 && code <= 0xdfff);
    out += text.slice(from, hash) + (printable ? String.fromCodePoint(code) : "\uFFFD");
    from = i + 1;
  }
  return out + text.slice(from);
}

/** `ID["label"]` at the start of `text`: the id, the decoded label and what follows; null when it is not that. */
function quotedNode(text: string): { id: string; label: string; after: string } | null {
  const open = text.indexOf('["');
  if (open <= 0) return null;
  const id = text.slice(0, open);
  const close = text.indexOf('"', open + 2);
  if (!isId(id) || close < 0 || text[close + 1] !== "]") return null;
  return { id, label: decodeEntities(text.slice(open + 2, close)), after: text.slice(close + 2) };
}

/** A non-negative decimal number, digits and at most one point: NaN for anything else. */
function decimal(text: string): number {
  if (text.length === 0 || text.length > 15) return NaN;
  let points = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) points++;
    else if (c < 48 || c > 57) return NaN;
  }
  return points > 1 || text === "." ? NaN : Number(text);
}

// ---------------------------------------------------------------------------------------------
// Flowcharts

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa` or a colour's name: what goes into a fill or stroke attribute. */
function colour(value: string): string | undefined {
  if (value.startsWith("#")) {
    const hex = value.slice(1);
    if (![3, 4, 6, 8].includes(hex.length)) return undefined;
    for (let i = 0; i < hex.length; i++) if (!isHex(hex.charCodeAt(i))) return undefined;
    return value;
  }
  if (value.length === 0 || value.length > 20) return undefined;
  for (let i = 0; i < value.length; i++) if (!isLetter(value.charCodeAt(i))) return undefined;
  return value;
}

const pixels = (value: string) => {
  const n = decimal(value.endsWith("px") ? value.slice(0, -2) : value);
  return Number.isFinite(n) && n <= 20 ? String(n) : undefined;
};

/** `4 3` or `4,3`: numbers only. */
function dashes(value: string): string | undefined {
  const parts = words(value.replaceAll(",", " "));
  if (parts.length === 0 || parts.length > 8) return undefined;
  const ns = parts.map((p) => pixels(p));
  return ns.every((n) => n !== undefined) ? ns.join(" ") : undefined;
}

/** `fill:#fde2e1,stroke:#c0392b,stroke-width:2px`: the properties this renderer draws; the others are ignored. */
function classStyle(text: string): ClassStyle {
  const style: ClassStyle = {};
  for (const part of text.split(",")) {
    const colon = part.indexOf(":");
    if (colon < 0) continue;
    const key = part.slice(0, colon).trim();
    const value = part.slice(colon + 1).trim();
    if (key === "fill") style.fill = colour(value);
    else if (key === "stroke") style.stroke = colour(value);
    else if (key === "color") style.color = colour(value);
    else if (key === "stroke-width") style.strokeWidth = pixels(value);
    else if (key === "stroke-dasharray") style.dasharray = dashes(value);
  }
  return style;
}

function parseFlowchart(lines: string[], firstLine: number, direction: "TD" | "LR"): Flowchart {
  const nodes: FlowNode[] = [];
  const index = new Map<string, number>();
  const edges: FlowEdge[] = [];
  const subgraphs: FlowGroup[] = [];
  const styles = new Map<string, ClassStyle>();
  const assigned: Array<[ids: string[], name: string]> = [];
  let open: number | undefined;

  const node = (id: string): number => {
    let i = index.get(id);
    if (i === undefined) {
      if (nodes.length >= MAX_NODES) refuse(`more than ${MAX_NODES} nodes`);
      i = nodes.length;
      nodes.push({ id, label: id, classes: [] });
      index.set(id, i);
    }
    return i;
  };

  lines.forEach((raw, k) => {
    const line = raw.trim();
    const at = `line ${firstLine + k}`;
    if (isBlankOrComment(line)) return;
    if (line === "end") {
      if (open === undefined) refuse(`${at}: end without subgraph`);
      open = undefined;
      return;
    }
    if (line.startsWith("subgraph ")) {
      if (open !== undefined) refuse(`${at}: nested subgraph`);
      const text = line.slice("subgraph ".length).trim();
      const quoted = quotedNode(text);
      if (quoted ? quoted.after !== "" : !isId(text)) refuse(`${at}: unreadable subgraph`);
      if (subgraphs.length >= MAX_NODES) refuse(`more than ${MAX_NODES} subgraphs`);
      open = subgraphs.length;
      subgraphs.push({ id: quoted?.id ?? text, label: quoted?.label ?? text, members: [] });
      return;
    }
    const w = words(line);
    if (w[0] === "classDef" && w.length >= 3) {
      const names = w[1]!.split(",");
      if (!names.every(isId)) refuse(`${at}: unreadable classDef`);
      const style = classStyle(line.slice("classDef".length).trimStart().slice(w[1]!.length));
      for (const name of names) styles.set(name, style);
      return;
    }
    if (w[0] === "class" && w.length === 3) {
      const ids = w[1]!.split(",");
      if (!ids.every(isId) || !isId(w[2]!)) refuse(`${at}: unreadable class statement`);
      if (assigned.length >= MAX_EDGES) refuse(`more than ${MAX_EDGES} class statements`);
      assigned.push([ids, w[2]!]);
      return;
    }
    const declared = quotedNode(line);
    if (declared) {
      const after = declared.after;
      if (after !== "" && !(after.startsWith(":::") && isId(after.slice(3)))) refuse(`${at}: unreadable node`);
      const i = node(declared.id);
      const n = nodes[i]!;
      n.label = declared.label;
      if (after !== "") n.classes.push(after.slice(3));
      if (open !== undefined && n.group === undefined) {
        n.group = open;
        subgraphs[open]!.members.push(i);
      }
      return;
    }
    if (w.length === 3 && (w[1] === "-->" || w[1] === "==>") && isId(w[0]!) && isId(w[2]!)) {
      if (edges.length >= MAX_EDGES) refuse(`more than ${MAX_EDGES} arrows`);
      edges.push({ from: node(w[0]!), to: node(w[2]!), critical: w[1] === "==>" });
      return;
    }
    if (w.length === 1 && isId(w[0]!)) {
      const i = node(w[0]!);
      if (open !== undefined && nodes[i]!.group === undefined) {
        nodes[i]!.group = open;
        subgraphs[open]!.members.push(i);
      }
      return;
    }
    refuse(`${at}: a statement this page does not draw`);
  });
  if (open !== undefined) refuse("a subgraph without end");

  for (const [ids, name] of assigned) {
    for (const id of ids) {
      const i = index.get(id);
      if (i !== undefined) nodes[i]!.classes.push(name);
    }
  }
  // Empty subgraphs are not drawn: renumber the others and point their members at the new numbers.
  const groups = subgraphs.filter((g) => g.members.length > 0);
  groups.forEach((g, gi) => {
    for (const m of g.members) nodes[m]!.group = gi;
  });
  return { kind: "flowchart", direction, nodes, edges, groups, styles };
}

// ---------------------------------------------------------------------------------------------
// Gantt

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
const TAGS = new Set(["crit", "done", "active", "milestone"]);
/** Past this many seconds (hours, on visualize_plan's scale) a chart is not a plan's: it bounds the axis. */
const MAX_SECONDS = 1e9;

/** `2.5s`, `90m`, `0s`: seconds. */
function duration(text: string, at: string): number {
  const unit = text.endsWith("ms") ? "ms" : text.slice(-1);
  const per = UNIT_SECONDS[unit];
  const n = per === undefined ? NaN : decimal(text.slice(0, text.length - unit.length)) * per;
  return Number.isFinite(n) && n <= MAX_SECONDS ? n : refuse(`${at}: unreadable duration`);
}

function parseGantt(lines: string[], firstLine: number): Gantt {
  let title = "";
  const sections: string[] = [];
  const tasks: GanttTask[] = [];
  const ends = new Map<string, number>();
  let afterNames = 0;

  lines.forEach((raw, k) => {
    const line = raw.trim();
    const at = `line ${firstLine + k}`;
    if (isBlankOrComment(line)) return;
    const space = line.indexOf(" ");
    const keyword = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? "" : line.slice(space + 1).trim();
    if (keyword === "title") title = value;
    else if (keyword === "dateFormat") {
      if (value !== "X") refuse(`${at}: only dateFormat X (seconds) is drawn here`);
    } else if (keyword === "axisFormat" || keyword === "todayMarker") return;
    else if (keyword === "section") {
      if (sections.length >= MAX_NODES) refuse(`more than ${MAX_NODES} sections`);
      sections.push(value);
    } else {
      const colon = line.indexOf(":");
      if (colon < 0) refuse(`${at}: a statement this page does not draw`);
      if (tasks.length >= MAX_NODES) refuse(`more than ${MAX_NODES} tasks`);
      const name = line.slice(0, colon).trim();
      const meta = line
        .slice(colon + 1)
        .split(",")
        .map((p) => p.trim());
      let crit = false;
      while (meta.length > 1 && TAGS.has(meta[0]!)) crit = meta.shift() === "crit" || crit;
      if (meta.length > 3) refuse(`${at}: unreadable task`);
      const id = meta.length === 3 ? meta.shift()! : `task${tasks.length + 1}`;
      if (!isId(id) || ends.has(id)) refuse(`${at}: unreadable or repeated task id`);
      let start: number;
      if (meta.length === 1) start = tasks.length > 0 ? tasks[tasks.length - 1]!.end : 0;
      else {
        const from = meta.shift()!;
        if (from.startsWith("after ")) {
          const names = words(from.slice("after ".length));
          afterNames += names.length;
          if (afterNames > MAX_EDGES) refuse(`more than ${MAX_EDGES} names after "after"`);
          start = 0;
          for (const n of names) start = Math.max(start, ends.get(n) ?? refuse(`${at}: after a task not drawn before it`));
        } else {
          start = decimal(from);
          if (!(start <= MAX_SECONDS)) refuse(`${at}: unreadable start`);
        }
      }
      const end = start + duration(meta[0]!, at);
      if (end > MAX_SECONDS) refuse(`${at}: ends past ${MAX_SECONDS} seconds`);
      ends.set(id, end);
      tasks.push({ id, name, section: sections.length - 1, crit, start, end });
    }
  });
  return { kind: "gantt", title, sections, tasks };
}
