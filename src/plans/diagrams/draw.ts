/**
 * Mermaid diagrams of a plan (visualize_plan): the steps' dependencies as a flowchart, the files the
 * steps change grouped by directory, and a Gantt chart from the steps' effort estimates. Pure
 * functions of the plan, so the same plan always draws the same text.
 *
 * Text from the plan only ever lands inside a label, escaped for the diagram it lands in and cut to
 * a bound measured after escaping; node ids are made from step numbers and indexes, never from the
 * plan's text, so no title can close a label, start a statement or hit a reserved word. Every
 * diagram stays within Mermaid's default limits (MAX_DIAGRAM_CHARS, MAX_EDGES), and says in its
 * notes what it left out or assumed to get there.
 */
import type { Plan, PlanStep } from "../document/schema";

export const DIAGRAM_KINDS = ["dependencies", "architecture", "gantt"] as const;
export type DiagramKind = (typeof DIAGRAM_KINDS)[number];

/** Mermaid's default maxTextSize and maxEdges: past either, a diagram does not render. */
export const MAX_DIAGRAM_CHARS = 50_000;
export const MAX_EDGES = 500;
/** The architecture view keeps the files most steps change, and this many links from steps to them. */
export const MAX_FILES = 60;
export const MAX_FILE_LINKS = 200;
/** Effort the Gantt chart gives a step whose estimate it cannot read, and the most it gives any step. */
export const DEFAULT_EFFORT_HOURS = 4;
const MAX_EFFORT_HOURS = 1000;

/** Label bounds, in characters after escaping: what keeps 200 steps and 100 milestones under MAX_DIAGRAM_CHARS. */
const TITLE_CHARS = 60;
const FILE_CHARS = 40;
const GOAL_CHARS = 80;

export interface Diagram {
  mermaid: string;
  /** True when part of the plan is not in the diagram; the notes say which. */
  truncated: boolean;
  notes: string[];
}

export type Drawable = Pick<Plan, "goal" | "steps" | "milestones" | "architecture" | "dependency_graph">;

export function drawPlan(plan: Drawable, kind: DiagramKind): Diagram {
  if (kind === "architecture") return architectureDiagram(plan);
  if (kind === "gantt") return ganttDiagram(plan);
  return dependencyDiagram(plan);
}

// ---------------------------------------------------------------------------------------------
// Labels

/** One line: control characters become spaces, invisible format characters (bidi overrides, zero widths) go. */
const oneLine = (text: string) =>
  text
    .replace(/\p{Cf}/gu, "")
    .replace(/[\p{Cc}\s]+/gu, " ")
    .trim();

/** `text` on one line, each character escaped, cut with an ellipsis so the escaped result has at most `max` characters. */
function label(text: string, max: number, escape: (ch: string) => string): string {
  // Every piece is at least one character long, so max + 1 of them decide whether it fits.
  const pieces = Array.from(oneLine(text))
    .slice(0, max + 1)
    .map(escape);
  if (pieces.reduce((n, p) => n + p.length, 0) <= max) return pieces.join("");
  let out = "";
  for (const p of pieces) {
    if (out.length + p.length > max - 1) break;
    out += p;
  }
  return `${out.trimEnd()}…`;
}

/**
 * Inside a flowchart's quoted label only `"` ends the text, but Mermaid reads `#…;` as an entity,
 * `%%{…}%%` anywhere as a directive, and `<…>` and `&` as HTML: all of them go in as entity codes.
 */
const FLOW_ESCAPES: Record<string, string> = { '"': "#34;", "#": "#35;", "%": "#37;", "&": "#38;", "<": "#60;", ">": "#62;", "`": "#96;" };
const flowEscape = (ch: string) => FLOW_ESCAPES[ch] ?? ch;
const flowText = (text: string, max: number) => label(text, max, flowEscape);

/**
 * A Gantt line is not quoted: `:` ends a task's name, `#` and `;` end a section's or a setting's,
 * `%` starts a comment. They become their full-width forms, which read the same; entity codes
 * would not help, since they are made of `#` and `;`.
 */
const GANTT_ESCAPES: Record<string, string> = { ":": "\uFF1A", ";": "\uFF1B", "#": "\uFF03", "%": "\uFF05", "`": "\uFF40" };
const ganttEscape = (ch: string) => GANTT_ESCAPES[ch] ?? ch;
const ganttText = (text: string, max: number) => label(text, max, ganttEscape);

const stepId = (n: number) => `s${n}`;
const stepLabel = (s: PlanStep) => `${s.step_number}. ${flowText(s.title, TITLE_CHARS)}`;

/** "1, 2, 3" for up to `max` numbers, then how many more. */
function listNumbers(ns: readonly number[], max = 20): string {
  const shown = ns.slice(0, max).join(", ");
  return ns.length > max ? `${shown} and ${ns.length - max} more` : shown;
}

/** The first milestone that includes each step (a step several milestones list is drawn once). */
function milestoneOfStep(plan: Drawable): Map<number, number> {
  const home = new Map<number, number>();
  plan.milestones.forEach((m, i) => {
    for (const n of m.steps_included) if (!home.has(n)) home.set(n, i);
  });
  return home;
}

// ---------------------------------------------------------------------------------------------
// Dependencies

type Edge = readonly [from: number, to: number];

/**
 * Drops the edges a longer chain already implies (a → c when a → b → c): the order they show is
 * unchanged. Steps are valid and acyclic here (the schema checked them). Ancestor sets are bitsets,
 * so 200 densely linked steps cost microseconds, not a Worker's CPU budget.
 */
function impliedEdgesRemoved(steps: readonly PlanStep[]): Edge[] {
  const index = new Map(steps.map((s, i) => [s.step_number, i]));
  const deps = steps.map((s) => s.depends_on.map((d) => index.get(d)!));
  const words = Math.ceil(steps.length / 32);
  const ancestors: Array<Uint32Array | undefined> = steps.map(() => undefined);
  // Iterative post-order, so a 200-step chain cannot overflow the stack.
  for (let root = 0; root < steps.length; root++) {
    const stack: Array<{ i: number; expanded: boolean }> = [{ i: root, expanded: false }];
    while (stack.length > 0) {
      const top = stack.pop()!;
      if (ancestors[top.i]) continue;
      if (!top.expanded) {
        stack.push({ i: top.i, expanded: true });
        for (const d of deps[top.i]!) if (!ancestors[d]) stack.push({ i: d, expanded: false });
        continue;
      }
      const set = new Uint32Array(words);
      for (const d of deps[top.i]!) {
        set[d >>> 5]! |= 1 << (d & 31);
        const up = ancestors[d]!;
        for (let w = 0; w < words; w++) set[w]! |= up[w]!;
      }
      ancestors[top.i] = set;
    }
  }
  const kept: Edge[] = [];
  steps.forEach((s, i) => {
    const mine = deps[i]!;
    mine.forEach((d, k) => {
      let implied = false;
      for (const other of mine) if (other !== d && (ancestors[other]![d >>> 5]! >>> (d & 31)) & 1) implied = true;
      if (!implied) kept.push([s.depends_on[k]!, s.step_number]);
    });
  });
  return kept;
}

function dependencyEdges(plan: Drawable, critical: ReadonlySet<string>): { edges: Edge[]; truncated: boolean; notes: string[] } {
  const all: Edge[] = plan.steps.flatMap((s) => s.depends_on.map((d) => [d, s.step_number] as const));
  if (all.length <= MAX_EDGES) return { edges: all, truncated: false, notes: [] };
  const reduced = impliedEdgesRemoved(plan.steps);
  const notes =
    reduced.length < all.length ? [`${all.length - reduced.length} of ${all.length} dependencies are not drawn: a longer chain of drawn ones implies each (the order shown is the same).`] : [];
  if (reduced.length <= MAX_EDGES) return { edges: reduced, truncated: false, notes };
  // Still too many for Mermaid: the critical path's edges first, then the others in plan order.
  const key = ([a, b]: Edge) => `${a}>${b}`;
  const ranked = [...reduced.filter((e) => critical.has(key(e))), ...reduced.filter((e) => !critical.has(key(e)))];
  const edges = ranked.slice(0, MAX_EDGES);
  const drawn = new Set(edges.map(key));
  const order = new Map(reduced.map((e, i) => [key(e), i]));
  edges.sort((a, b) => order.get(key(a))! - order.get(key(b))!);
  const missing = reduced.filter((e) => !drawn.has(key(e)));
  notes.push(
    `${missing.length} of ${all.length} dependencies are left out to stay within Mermaid's ${MAX_EDGES} edges: some or all of those of steps ${listNumbers([...new Set(missing.map(([, to]) => to))], 10)}; load_plan has them all.`,
  );
  return { edges, truncated: true, notes };
}

/**
 * A flowchart: a node per step (in a subgraph per milestone), an edge from each step to the steps
 * that depend on it, and the critical path in bold arrows and its own colour.
 */
export function dependencyDiagram(plan: Drawable): Diagram {
  const lines = ["flowchart TD"];
  if (plan.steps.length === 0) {
    lines.push('    empty["The plan has no steps"]');
    return { mermaid: lines.join("\n"), truncated: false, notes: [] };
  }
  const home = milestoneOfStep(plan);
  const node = (s: PlanStep) => `${stepId(s.step_number)}["${stepLabel(s)}"]`;
  plan.milestones.forEach((m, i) => {
    const members = plan.steps.filter((s) => home.get(s.step_number) === i);
    if (members.length === 0) return;
    lines.push(`    subgraph m${i + 1}["${flowText(m.name, TITLE_CHARS) || `Milestone ${i + 1}`}"]`);
    for (const s of members) lines.push(`        ${node(s)}`);
    lines.push("    end");
  });
  for (const s of plan.steps) if (!home.has(s.step_number)) lines.push(`    ${node(s)}`);

  const path = plan.dependency_graph.critical_path;
  const criticalEdges = new Set(path.slice(1).map((n, i) => `${path[i]}>${n}`));
  const { edges, truncated, notes } = dependencyEdges(plan, criticalEdges);
  for (const [from, to] of edges) lines.push(`    ${stepId(from)} ${criticalEdges.has(`${from}>${to}`) ? "==>" : "-->"} ${stepId(to)}`);
  // A one-step "path" is every plan's longest chain when nothing depends on anything: not worth a colour.
  if (path.length > 1) {
    lines.push("    classDef critical fill:#fde2e1,stroke:#c0392b,stroke-width:2px");
    lines.push(`    class ${path.map(stepId).join(",")} critical`);
  }
  return { mermaid: lines.join("\n"), truncated, notes };
}

// ---------------------------------------------------------------------------------------------
// Architecture

const FILE_KINDS = ["created", "deleted", "renamed", "modified"] as const;
type FileKind = (typeof FILE_KINDS)[number];
const KIND_OF_CHANGE: Record<string, FileKind> = { create: "created", delete: "deleted", rename: "renamed", modify: "modified" };
const KIND_STYLE: Record<FileKind, string> = {
  created: "fill:#dafbe1,stroke:#1a7f37",
  deleted: "fill:#ffebe9,stroke:#cf222e,stroke-dasharray:4 3",
  renamed: "fill:#ddf4ff,stroke:#0969da",
  modified: "fill:#fff8c5,stroke:#9a6700",
};

interface FileNode {
  path: string;
  dir: string;
  base: string;
  /** Created wins over deleted over renamed over modified: what the plan does to the file overall. */
  kind: FileKind;
  steps: number[];
}

/** `./src\\a//b.ts` and `src/a/b.ts` are one file. */
function normalizePath(raw: string): string {
  const p = raw
    .trim()
    .replace(/\\/g, "/")
    .replace(/\/{2,}/g, "/")
    .replace(/^(?:\.\/)+/, "")
    .replace(/^\/+/, "");
  return p === "" ? raw.trim() : p;
}

function filesOfPlan(plan: Drawable): FileNode[] {
  const files = new Map<string, FileNode>();
  const touch = (raw: string, kind: FileKind, step: number) => {
    const path = normalizePath(raw);
    let f = files.get(path);
    if (!f) {
      const cut = path.lastIndexOf("/");
      f = { path, dir: cut < 0 ? "" : path.slice(0, cut), base: cut < 0 ? path : path.slice(cut + 1), kind, steps: [] };
      files.set(path, f);
    }
    if (FILE_KINDS.indexOf(kind) < FILE_KINDS.indexOf(f.kind)) f.kind = kind;
    if (f.steps[f.steps.length - 1] !== step) f.steps.push(step);
  };
  for (const s of plan.steps) {
    for (const f of s.files_to_create) touch(f.path, "created", s.step_number);
    for (const f of s.files_to_modify) touch(f.path, KIND_OF_CHANGE[f.change_type] ?? "modified", s.step_number);
    for (const p of s.files_to_delete) touch(p, "deleted", s.step_number);
  }
  return [...files.values()];
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A directory's label keeps its end, the part that tells directories apart. */
function dirLabel(dir: string): string {
  if (dir === "") return "(root)";
  const whole = flowText(dir, Number.MAX_SAFE_INTEGER);
  if (whole.length <= TITLE_CHARS) return whole;
  const chars = Array.from(oneLine(dir));
  let tail = "";
  for (let i = chars.length - 1; i >= 0; i--) {
    const piece = flowEscape(chars[i]!);
    if (tail.length + piece.length > TITLE_CHARS - 1) break;
    tail = piece + tail;
  }
  return `…${tail}`;
}

/**
 * A flowchart of the files the steps create, modify, rename or delete, in a subgraph per directory,
 * each marked by what happens to it, with an edge from every step to the files it changes.
 */
export function architectureDiagram(plan: Drawable): Diagram {
  const lines = ["flowchart LR"];
  const notes: string[] = [];
  const own = plan.architecture.diagrams.filter((d) => d.type === "architecture");
  if (own.length > 0) {
    notes.push(
      `The plan carries ${own.length === 1 ? "its own architecture diagram" : `${own.length} architecture diagrams of its own`} (architecture.diagrams, first: "${Array.from(oneLine(own[0]!.title)).slice(0, 80).join("")}"); load_plan returns ${own.length === 1 ? "it" : "them"} as written. This one is drawn from the files the steps change.`,
    );
  }
  const all = filesOfPlan(plan);
  if (all.length === 0) {
    lines.push('    empty["No step lists files to create, modify or delete"]');
    return { mermaid: lines.join("\n"), truncated: false, notes };
  }
  let truncated = false;
  const ranked = [...all].sort((a, b) => b.steps.length - a.steps.length || byText(a.path, b.path));
  const files = ranked.slice(0, MAX_FILES).sort((a, b) => byText(a.dir, b.dir) || byText(a.base, b.base) || byText(a.path, b.path));
  if (all.length > MAX_FILES) {
    truncated = true;
    notes.push(`${MAX_FILES} of ${all.length} files are drawn: the ones the most steps change.`);
  }
  const fileId = new Map(files.map((f, i) => [f.path, `f${i + 1}`]));
  const links: Array<[number, string]> = [];
  for (const s of plan.steps) {
    const touched = files.filter((f) => f.steps.includes(s.step_number));
    for (const f of touched) links.push([s.step_number, fileId.get(f.path)!]);
  }
  const drawn = links.slice(0, MAX_FILE_LINKS);
  if (links.length > MAX_FILE_LINKS) {
    truncated = true;
    const left = [...new Set(links.slice(MAX_FILE_LINKS).map(([n]) => n))];
    notes.push(`${MAX_FILE_LINKS} of ${links.length} links from steps to files are drawn, in step order; steps ${listNumbers(left, 10)} lose some or all of theirs.`);
  }
  const shown = new Set(drawn.map(([n]) => n));
  for (const s of plan.steps) if (shown.has(s.step_number)) lines.push(`    ${stepId(s.step_number)}["${stepLabel(s)}"]`);
  const dirs = [...new Set(files.map((f) => f.dir))];
  dirs.forEach((dir, i) => {
    lines.push(`    subgraph d${i + 1}["${dirLabel(dir)}"]`);
    for (const f of files.filter((x) => x.dir === dir)) lines.push(`        ${fileId.get(f.path)}["${flowText(f.base, FILE_CHARS)} (${f.kind})"]:::${f.kind}`);
    lines.push("    end");
  });
  for (const [n, id] of drawn) lines.push(`    ${stepId(n)} --> ${id}`);
  for (const kind of FILE_KINDS) if (files.some((f) => f.kind === kind)) lines.push(`    classDef ${kind} ${KIND_STYLE[kind]}`);
  return { mermaid: lines.join("\n"), truncated, notes };
}

// ---------------------------------------------------------------------------------------------
// Gantt

const HOURS_PER_UNIT: Array<[RegExp, number]> = [
  [/^(?:months?|mo)$/i, 160],
  [/^(?:weeks?|wks?|w)$/i, 40],
  [/^(?:days?|d)$/i, 8],
  [/^(?:hours?|hrs?|h)$/i, 1],
  [/^(?:minutes?|mins?|m)$/i, 1 / 60],
];
const EFFORT = /(\d+(?:\.\d+)?)\s*(?:(?:-|–|—|to)\s*(\d+(?:\.\d+)?)\s*)?(months?|mo|weeks?|wks?|w|days?|d|hours?|hrs?|h|minutes?|mins?|m)(?![a-z])/gi;

/**
 * Hours of work in an estimate such as "2-3 hours", "1 day", "30m" or "1h 30m": a range counts as
 * its upper end, parts add up, a day is 8 hours, a week 40, a month 160. Null when none is found.
 */
export function effortHours(text: string): number | null {
  let hours = 0;
  let found = false;
  for (const m of text.matchAll(EFFORT)) {
    const amount = Math.max(Number(m[1]), Number(m[2] ?? m[1]));
    const per = HOURS_PER_UNIT.find(([re]) => re.test(m[3]!))![1];
    hours += amount * per;
    found = true;
  }
  return found ? hours : null;
}

/** Seconds on the chart: two decimals at most, within bounds. */
const chartHours = (h: number) => String(Number(Math.min(MAX_EFFORT_HOURS, Math.max(0.25, h)).toFixed(2)));

/**
 * A dependency order that keeps each milestone's steps together where the dependencies allow:
 * among the steps that are ready, the one of the earliest section first, then plan order.
 * Gantt's `after` must name a task already drawn, so the order has to be topological.
 */
function sectionedOrder(steps: readonly PlanStep[], section: (s: PlanStep) => number): PlanStep[] {
  const position = new Map(steps.map((s, i) => [s.step_number, i]));
  const waiting = new Map(steps.map((s) => [s.step_number, new Set(s.depends_on)]));
  const dependents = new Map<number, PlanStep[]>();
  for (const s of steps) {
    for (const d of s.depends_on) {
      const list = dependents.get(d);
      if (list) list.push(s);
      else dependents.set(d, [s]);
    }
  }
  const ready = steps.filter((s) => s.depends_on.length === 0);
  const order: PlanStep[] = [];
  while (ready.length > 0) {
    ready.sort((a, b) => section(a) - section(b) || position.get(a.step_number)! - position.get(b.step_number)!);
    const next = ready.shift()!;
    order.push(next);
    for (const m of dependents.get(next.step_number) ?? []) {
      const w = waiting.get(m.step_number)!;
      w.delete(next.step_number);
      if (w.size === 0) ready.push(m);
    }
  }
  return order;
}

/**
 * A Gantt chart: a section per milestone, a task per step after the steps it depends on, the
 * critical path marked crit. It needs no calendar: `dateFormat X` starts the plan at 0, and one
 * second stands for one hour of effort, so the axis (`%s`) counts hours from the start in any time zone.
 */
export function ganttDiagram(plan: Drawable): Diagram {
  const notes: string[] = [];
  const lines = [
    "gantt",
    `    title ${ganttText(plan.goal, GOAL_CHARS) || "Plan"}`,
    "    dateFormat X",
    "    axisFormat %s",
    "    todayMarker off",
    "    %% One second on this chart is one hour of estimated effort (a day is 8 hours, a week 40): the axis counts hours from the start.",
  ];
  if (plan.steps.length === 0) {
    lines.push("    section Steps", "    The plan has no steps :none, 0, 0s");
    return { mermaid: lines.join("\n"), truncated: false, notes };
  }
  const guessed: number[] = [];
  const hours = new Map(
    plan.steps.map((s) => {
      const h = effortHours(s.estimated_effort);
      if (h === null) guessed.push(s.step_number);
      return [s.step_number, h ?? DEFAULT_EFFORT_HOURS] as const;
    }),
  );
  if (guessed.length > 0) notes.push(`No effort estimate could be read for step(s) ${listNumbers(guessed)}: ${DEFAULT_EFFORT_HOURS} hours each.`);

  const home = milestoneOfStep(plan);
  const unplaced = plan.milestones.length;
  const section = (s: PlanStep) => home.get(s.step_number) ?? unplaced;
  const order = sectionedOrder(plan.steps, section);
  const critical = new Set(plan.dependency_graph.critical_path);

  // When the steps finish if each starts once all it depends on are done: what picks the one
  // dependency to name when naming them all would be too long.
  const end = new Map<number, number>();
  for (const s of order) end.set(s.step_number, Math.max(0, ...s.depends_on.map((d) => end.get(d)!)) + Number(chartHours(hours.get(s.step_number)!)));
  const lastToEnd = (s: PlanStep) => s.depends_on.reduce((a, b) => (end.get(b)! > end.get(a)! || (end.get(b) === end.get(a) && b < a) ? b : a));

  const draw = (after: (s: PlanStep) => readonly number[]) => {
    const out: string[] = [];
    let current = -1;
    for (const s of order) {
      const sec = section(s);
      if (sec !== current) {
        current = sec;
        const name = sec < unplaced ? ganttText(plan.milestones[sec]!.name, TITLE_CHARS) || `Milestone ${sec + 1}` : unplaced > 0 ? "Other steps" : "Steps";
        out.push(`    section ${name}`);
      }
      const deps = after(s);
      const start = deps.length > 0 ? `after ${deps.map(stepId).join(" ")}` : "0";
      out.push(`    ${s.step_number}. ${ganttText(s.title, TITLE_CHARS)} :${critical.has(s.step_number) ? "crit, " : ""}${stepId(s.step_number)}, ${start}, ${chartHours(hours.get(s.step_number)!)}s`);
    }
    return out;
  };
  let tasks = draw((s) => s.depends_on);
  if ([...lines, ...tasks].join("\n").length > MAX_DIAGRAM_CHARS) {
    tasks = draw((s) => (s.depends_on.length > 0 ? [lastToEnd(s)] : []));
    notes.push("Each task is drawn after only the dependency that finishes last (naming them all would pass Mermaid's size limit); the schedule is the same.");
  }
  return { mermaid: [...lines, ...tasks].join("\n"), truncated: false, notes };
}
