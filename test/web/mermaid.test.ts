/**
 * The dashboard's Mermaid renderer (src/web/app/mermaid): reading visualize_plan's three diagrams,
 * laying out flowcharts, scheduling Gantt charts, drawing them as SVG with hostile text escaped,
 * and falling back to the source for anything else.
 */
import { describe, expect, it } from "vitest";
import { drawPlan, type DiagramKind } from "../../src/plans/diagrams/draw";
import { parsePlan } from "../../src/plans/document/params";
import { completePlan } from "../../src/plans/document/schema";
import { hourTicks, layoutGantt } from "../../src/web/app/mermaid/gantt";
import { MermaidFigure, type MermaidFigureProps } from "../../src/web/app/mermaid/index";
import { layering, layoutFlowchart, type Box, type FlowLayout } from "../../src/web/app/mermaid/layout";
import { decodeEntities, MAX_SOURCE_CHARS, parseMermaid, type Diagram, type Flowchart, type Gantt } from "../../src/web/app/mermaid/parse";
import { BIG, HOSTILE, PLAN } from "../fixtures/plans";

/** A fixture drawn as visualize_plan draws it (through JSON, the only way HOSTILE's control characters get in). */
function mermaidOf(fixture: object, kind: DiagramKind): string {
  const doc = parsePlan(JSON.stringify(fixture), "visualize_plan");
  return drawPlan(completePlan(doc, { id: "", version: 0, created_at: "", updated_at: "" }), kind).mermaid;
}

function parsed(text: string): Diagram {
  const r = parseMermaid(text);
  if (!r.ok) throw new Error(`not parsed: ${r.reason}`);
  return r.diagram;
}
const flowchart = (text: string) => parsed(text) as Flowchart;
const gantt = (text: string) => parsed(text) as Gantt;

const render = async (props: MermaidFigureProps) => String(await MermaidFigure(props).toString());
const FALLBACK = "This diagram could not be drawn here; its Mermaid source:";

const overlap = (a: Box, b: Box) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const inside = (inner: Box, outer: Box) => inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.w <= outer.x + outer.w && inner.y + inner.h <= outer.y + outer.h;

function expectNoOverlaps(boxes: Box[]) {
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) expect(overlap(boxes[i]!, boxes[j]!), `boxes ${i} and ${j}`).toBe(false);
}

/** Every arrow runs from a lower layer to a higher one, leaving its source's edge and arriving at its target's. */
function expectDownward(chart: Flowchart, layout: FlowLayout) {
  const td = chart.direction === "TD";
  for (const e of layout.edges) {
    const from = layout.nodes[e.from]!;
    const to = layout.nodes[e.to]!;
    expect(from.layer).toBeLessThan(to.layer);
    if (td) {
      expect(e.start).toEqual([from.x + from.w / 2, from.y + from.h]);
      expect(e.end).toEqual([to.x + to.w / 2, to.y]);
    } else {
      expect(e.start).toEqual([from.x + from.w, from.y + from.h / 2]);
      expect(e.end).toEqual([to.x, to.y + to.h / 2]);
    }
  }
}

describe("parseMermaid", () => {
  it("reads the dependency flowchart: nodes in their milestones' subgraphs, critical arrows, the critical class", () => {
    const c = flowchart(mermaidOf(PLAN, "dependencies"));
    expect(c.direction).toBe("TD");
    expect(c.nodes.map((n) => [n.id, n.label, n.group, n.classes])).toEqual([
      ["s1", "1. Add a limiter module", 0, ["critical"]],
      ["s2", "2. Wire it into the router", 0, ["critical"]],
      ["s3", "3. Document the limits", 1, []],
      ["s4", "4. Tests", 1, ["critical"]],
      ["s5", "5. Announce", undefined, ["critical"]],
    ]);
    expect(c.groups).toEqual([
      { id: "m1", label: "Core", members: [0, 1] },
      { id: "m2", label: "Polish", members: [2, 3] },
    ]);
    expect(c.edges).toEqual([
      { from: 0, to: 1, critical: true },
      { from: 0, to: 2, critical: false },
      { from: 1, to: 3, critical: true },
      { from: 2, to: 3, critical: false },
      { from: 3, to: 4, critical: true },
    ]);
    expect(c.styles.get("critical")).toEqual({ fill: "#fde2e1", stroke: "#c0392b", strokeWidth: "2" });
  });

  it("reads the architecture flowchart: steps, files in a subgraph per directory, a class per kind of change", () => {
    const c = flowchart(mermaidOf(PLAN, "architecture"));
    expect(c.direction).toBe("LR");
    expect(c.nodes).toHaveLength(9);
    expect(c.groups.map((g) => [g.label, g.members.map((m) => c.nodes[m]!.label)])).toEqual([
      ["(root)", ["README.md (modified)"]],
      ["src/http", ["limit.ts (created)", "router.ts (modified)"]],
      ["test", ["limit.test.ts (created)", "old-limit.test.ts (deleted)"]],
    ]);
    expect(c.nodes.find((n) => n.id === "f5")!.classes).toEqual(["deleted"]);
    expect(c.edges).toHaveLength(6);
    expect(c.edges.some((e) => e.critical)).toBe(false);
    expect(c.styles.get("deleted")).toEqual({ fill: "#ffebe9", stroke: "#cf222e", dasharray: "4 3" });
    expect(c.styles.has("renamed")).toBe(false);
  });

  it("reads the Gantt chart: sections, crit, and each start after the tasks it names", () => {
    const g = gantt(mermaidOf(PLAN, "gantt"));
    expect(g.title).toBe("Add rate limiting to the public API");
    expect(g.sections).toEqual(["Core", "Polish", "Other steps"]);
    expect(g.tasks.map((t) => [t.id, t.name, t.section, t.crit, t.start, t.end])).toEqual([
      ["s1", "1. Add a limiter module", 0, true, 0, 3],
      ["s2", "2. Wire it into the router", 0, true, 3, 11],
      ["s3", "3. Document the limits", 1, false, 3, 3.5],
      // After s2 (ends at 11) and s3 (ends at 3.5): the later end.
      ["s4", "4. Tests", 1, true, 11, 15],
      ["s5", "5. Announce", 2, true, 15, 16.5],
    ]);
  });

  it("decodes entity codes once, for display", () => {
    const c = flowchart(mermaidOf(HOSTILE, "dependencies"));
    expect(c.nodes.map((n) => n.label)).toEqual([
      "1. end",
      '2. & #35; %% --> "quoted" [bracket] {brac…',
      "3. section Foo: bar; #hash %pct click",
      "4. graph TD A-->Bx",
      `5. \`tick\` 日本語 🎉 ${"x".repeat(39)}…`,
      "6. ",
    ]);
    expect(c.groups.map((g) => g.label)).toEqual(["end", "section: x; #y %z", "Milestone 3"]);
    expect(decodeEntities("#60;b#62;#35;35;")).toBe("<b>#35;");
    expect(decodeEntities("#0; #abc; #12345678; # ;")).toBe("\uFFFD #abc; #12345678; # ;");
  });

  it("reads the empty plan's diagrams", () => {
    const empty = { goal: "Nothing yet" };
    expect(flowchart(mermaidOf(empty, "dependencies")).nodes).toEqual([{ id: "empty", label: "The plan has no steps", classes: [] }]);
    expect(gantt(mermaidOf(empty, "gantt")).tasks).toEqual([{ id: "none", name: "The plan has no steps", section: 0, crit: false, start: 0, end: 0 }]);
  });

  it("refuses what is not the subset, saying where", () => {
    const refused = (text: string) => {
      const r = parseMermaid(text);
      expect(r.ok).toBe(false);
      return r.ok ? "" : r.reason;
    };
    expect(refused("sequenceDiagram\n  a->>b: hi")).toMatch(/not a flowchart/);
    expect(refused("flowchart TD\n  a --> b\n  click a callback")).toBe("line 3: a statement this page does not draw");
    expect(refused('flowchart TD\n  subgraph a["x"]\n  subgraph b["y"]\n  end\n  end')).toBe("line 3: nested subgraph");
    expect(refused('flowchart TD\n  subgraph a["x"]\n  n1')).toBe("a subgraph without end");
    expect(refused("flowchart TD\n  end")).toBe("line 2: end without subgraph");
    expect(refused("gantt\n  dateFormat YYYY-MM-DD\n  a :2024-01-01, 3d")).toBe("line 2: only dateFormat X (seconds) is drawn here");
    expect(refused("gantt\n  dateFormat X\n  a :t1, after nope, 1s")).toBe("line 3: after a task not drawn before it");
    expect(refused("gantt\n  a :t1, 0, 5 parsecs")).toBe("line 2: unreadable duration");
    expect(refused(`flowchart TD\n${"  a --> b\n".repeat(6000)}`)).toBe(`longer than ${MAX_SOURCE_CHARS} characters`);
    expect(refused(`flowchart TD\n${Array.from({ length: 1001 }, (_, i) => `  n${i}`).join("\n")}`)).toBe("more than 1000 nodes");
    expect(refused(`flowchart TD\n${"  a --> b\n".repeat(1001)}`)).toBe("more than 1000 arrows");
  });
});

describe("layoutFlowchart", () => {
  const charts = () => ({
    "PLAN dependencies": flowchart(mermaidOf(PLAN, "dependencies")),
    "PLAN architecture": flowchart(mermaidOf(PLAN, "architecture")),
    "HOSTILE dependencies": flowchart(mermaidOf(HOSTILE, "dependencies")),
    "BIG dependencies": flowchart(mermaidOf(BIG, "dependencies")),
    "BIG architecture": flowchart(mermaidOf(BIG, "architecture")),
  });

  it("runs every arrow from a lower layer to a higher one, and no two boxes overlap", () => {
    for (const [name, chart] of Object.entries(charts())) {
      const layout = layoutFlowchart(chart);
      expect(layout.edges.length, name).toBe(chart.edges.length);
      expectDownward(chart, layout);
      expectNoOverlaps(layout.nodes);
      for (const n of layout.nodes) expect(inside(n, { x: 0, y: 0, w: layout.width, h: layout.height }), name).toBe(true);
    }
  });

  it("puts sources in layer 0 and each node one past its deepest predecessor", () => {
    const { layer, reversed } = layering(flowchart(mermaidOf(PLAN, "dependencies")));
    expect(layer).toEqual([0, 1, 1, 2, 3]);
    expect(reversed.some(Boolean)).toBe(false);
    expect(layoutFlowchart(flowchart(mermaidOf(BIG, "dependencies"))).layers).toBe(200);
  });

  it("is deterministic", () => {
    for (const [name, chart] of Object.entries(charts())) {
      const text = mermaidOf(name.startsWith("BIG") ? BIG : name.startsWith("HOSTILE") ? HOSTILE : PLAN, name.endsWith("architecture") ? "architecture" : "dependencies");
      expect(JSON.stringify(layoutFlowchart(flowchart(text))), name).toBe(JSON.stringify(layoutFlowchart(chart)));
    }
  });

  it("orders a layer to undo a crossing the declaration order makes", () => {
    // Declared c before d, but a (left) feeds d and b (right) feeds c.
    const chart = flowchart("flowchart TD\n  a\n  b\n  c\n  d\n  a --> d\n  b --> c");
    const [a, b, c, d] = layoutFlowchart(chart).nodes;
    expect(a!.x).toBeLessThan(b!.x);
    expect(d!.x).toBeLessThan(c!.x);
  });

  it("routes an arrow that skips a layer around the boxes in between", () => {
    const chart = flowchart("flowchart TD\n  a --> b\n  b --> c\n  a --> c");
    const layout = layoutFlowchart(chart);
    const skip = layout.edges[2]!;
    // Through a placeholder: two curves and a straight run through b's row, beside b.
    expect(skip.d.match(/C/g)).toHaveLength(2);
    const through = /L([\d.]+),/.exec(skip.d)!;
    const b = layout.nodes[1]!;
    const x = Number(through[1]);
    expect(x < b.x || x > b.x + b.w).toBe(true);
  });

  it("draws a box around each subgraph whose members share a layer, and stripes with a legend when they do not", () => {
    const arch = flowchart(mermaidOf(PLAN, "architecture"));
    const boxed = layoutFlowchart(arch);
    expect(boxed.groupStyle).toBe("boxes");
    const frames = boxed.groups.map((g) => g.box!);
    expectNoOverlaps(frames);
    arch.groups.forEach((g, gi) => {
      for (const m of g.members) expect(inside(boxed.nodes[m]!, frames[gi]!)).toBe(true);
    });
    arch.nodes.forEach((n, i) => {
      frames.forEach((f, gi) => {
        if (n.group !== gi) expect(overlap(boxed.nodes[i]!, f)).toBe(false);
      });
    });
    // Members of one subgraph sit next to each other in their layer.
    for (const g of arch.groups) {
      const ys = g.members.map((m) => boxed.nodes[m]!.y).sort((p, q) => p - q);
      const between = boxed.nodes.filter((n, i) => arch.nodes[i]!.group !== arch.nodes[g.members[0]!]!.group && n.layer === 1 && n.y > ys[0]! && n.y < ys[ys.length - 1]!);
      expect(between).toEqual([]);
    }

    const deps = layoutFlowchart(flowchart(mermaidOf(PLAN, "dependencies")));
    expect(deps.groupStyle).toBe("stripes");
    expect(deps.groups.map((g) => [g.text, g.colour])).toEqual([
      ["Core", "#0969da"],
      ["Polish", "#bf3989"],
    ]);
    // The legend sits above the nodes.
    const legendBottom = Math.max(...deps.groups.map((g) => g.legend!.y + 20));
    expect(Math.min(...deps.nodes.map((n) => n.y))).toBeGreaterThan(legendBottom);
  });

  it("keeps an architecture subgraph in one layer when some of its files lost their links", () => {
    const layout = layoutFlowchart(flowchart(mermaidOf(BIG, "architecture")));
    expect(layout.groupStyle).toBe("boxes");
  });

  it("lays out a cycle and a self-loop without failing, turning one arrow", () => {
    const chart = flowchart("flowchart LR\n  a --> b\n  b --> c\n  c --> a\n  c --> c");
    const { reversed } = layering(chart);
    expect(reversed).toEqual([false, false, true, false]);
    const layout = layoutFlowchart(chart);
    expect(layout.nodes.map((n) => n.layer)).toEqual([0, 1, 2]);
    // The turned arrow still starts at c and ends at a.
    expect(layout.edges[2]!.start[0]).toBeLessThan(layout.nodes[2]!.x + 1);
    expect(layout.edges[2]!.end[0]).toBe(layout.nodes[0]!.x + layout.nodes[0]!.w);
    expectNoOverlaps(layout.nodes);
  });

  it("clips long labels to the box and keeps the whole label for the tooltip", async () => {
    const long = "x".repeat(200);
    const layout = layoutFlowchart(flowchart(`flowchart TD\n  a["${long}"]`));
    expect(layout.nodes[0]!.text.endsWith("…")).toBe(true);
    expect(layout.nodes[0]!.text.length).toBeLessThan(60);
    const html = await render({ mermaid: `flowchart TD\n  a["${long}"]`, label: "Long" });
    expect(html).toContain(`<title>${long}</title>`);
  });
});

describe("Gantt layout", () => {
  it("puts each bar at its task's start and end, under its section's heading", () => {
    const chart = gantt(mermaidOf(PLAN, "gantt"));
    const layout = layoutGantt(chart);
    expect(layout.total).toBe(16.5);
    expect(layout.rows.map((r) => (r.kind === "section" ? `§${r.name}` : r.task.id))).toEqual(["§Core", "s1", "s2", "§Polish", "s3", "s4", "§Other steps", "s5"]);
    const bar = (id: string) => layout.rows.find((r) => r.kind === "task" && r.task.id === id) as Extract<(typeof layout.rows)[number], { kind: "task" }>;
    // s4 starts where s2 ends (11 h), not where s3 ends (3.5 h).
    expect(bar("s4").x).toBe(Math.round((bar("s2").x + bar("s2").w) * 10) / 10);
    expect(bar("s4").x).toBeGreaterThan(bar("s3").x + bar("s3").w);
    const perHour = bar("s2").w / 8;
    expect(bar("s4").w).toBeCloseTo(4 * perHour, 0);
    expect(layout.ticks.map((t) => t.hours)).toEqual([0, 4, 8, 12, 16, 20]);
    expect(layout.ticks[1]!.x - layout.ticks[0]!.x).toBeCloseTo(4 * perHour, 0);
  });

  it("spaces ticks so their labels fit, in steps of days and weeks on a long chart", () => {
    expect(hourTicks(16.5, 480)).toEqual([0, 4, 8, 12, 16, 20]);
    expect(hourTicks(1000, 4800).slice(0, 3)).toEqual([0, 40, 80]);
    expect(hourTicks(0, 480)).toEqual([0, 1]);
  });

  it("draws crit bars in the critical class, with the axis in hours", async () => {
    const html = await render({ mermaid: mermaidOf(PLAN, "gantt"), label: "Gantt chart" });
    expect(html.match(/class="mm-bar mm-bar-crit"/g)).toHaveLength(4);
    expect(html.match(/class="mm-bar"/g)).toHaveLength(1);
    expect(html).toContain(">0 h</text>");
    expect(html).toContain(">8 h</text>");
    expect(html).toContain("<title>4. Tests: from 11 h to 15 h (4 h), on the critical path</title>");
    expect(html).toContain("Gantt chart: 5 tasks in 3 sections, 16.5 h from start to finish, 4 on the critical path");
  });
});

describe("MermaidFigure", () => {
  const kinds = [
    ["dependencies", "Dependencies"],
    ["architecture", "Files by directory"],
    ["gantt", "Gantt chart"],
  ] as const;

  it("draws a figure: the SVG with its title, then the source to copy", async () => {
    const mermaid = mermaidOf(PLAN, "dependencies");
    const html = await render({ mermaid, label: "Dependencies" });
    expect(html.startsWith('<figure class="diagram"><svg class="mm-svg" viewBox="0 0 ')).toBe(true);
    expect(html).toContain('role="img" aria-labelledby="mm-dependencies-title"><title id="mm-dependencies-title">Dependencies: 5 nodes, 5 arrows (3 on the critical path) in 2 groups</title>');
    expect(html.match(/class="mm-edge edge-critical"/g)).toHaveLength(3);
    expect(html.match(/class="mm-edge"/g)).toHaveLength(2);
    expect(html).toContain('marker-end="url(#mm-dependencies-arrow-critical)"');
    expect(html).toContain('fill="#fde2e1" stroke="#c0392b" stroke-width="2"');
    // Text on the light critical fill is dark in either theme; an unclassed node uses the theme's colours.
    expect(html).toContain('class="mm-ink-dark">1. Add a limiter module</text>');
    expect(html).toContain('class="mm-fill mm-stroke"');
    expect(html).toContain("<title>1. Add a limiter module (Core)</title>");
    expect(html).toContain("<details><summary>Mermaid source</summary><pre><code>flowchart TD\n    subgraph m1[&quot;Core&quot;]");
    expect(html).not.toContain(FALLBACK);
  });

  it("keeps ids unique across a page's three figures, and uses no style attribute", async () => {
    const html = (await Promise.all(kinds.map(([kind, label]) => render({ mermaid: mermaidOf(PLAN, kind), label })))).join("");
    const ids = [...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThanOrEqual(7);
    expect(new Set(ids).size).toBe(ids.length);
    for (const m of html.matchAll(/url\(#([^)]+)\)/g)) expect(ids).toContain(m[1]);
    expect(html).not.toMatch(/ style=/);
    // The same label twice on a page: the index prop tells them apart.
    const [one, two] = await Promise.all([0, 1].map((index) => render({ mermaid: mermaidOf(PLAN, "dependencies"), label: "Dependencies", index })));
    expect(one).toContain('id="mm0-dependencies-arrow"');
    expect(two).toContain('id="mm1-dependencies-arrow"');
  });

  it("escapes hostile labels in every diagram", async () => {
    for (const [kind, label] of kinds) {
      const html = await render({ mermaid: mermaidOf(HOSTILE, kind), label });
      expect(html, kind).not.toContain(FALLBACK);
      expect(html, kind).not.toMatch(/<script|<b>|<\/b>/);
      if (kind !== "gantt") expect(html).toContain("<title>2. &amp; #35; %% --&gt; &quot;quoted&quot; [bracket] {brac…");
    }
    const gantt = await render({ mermaid: mermaidOf(HOSTILE, "gantt"), label: "Gantt chart" });
    expect(gantt).toContain("{brace} &lt;b&gt;bold&lt;/b&gt;");
    const script = await render({ mermaid: 'flowchart TD\n  a["#60;script#62;alert(1)#60;/script#62;"]', label: "<script>x</script>" });
    expect(script).not.toContain("<script");
    expect(script).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(script).toContain('id="mm-_3c_script_3e_x_3c__2f_script_3e_-title"');
  });

  it("draws a 200-step plan's diagrams within the bounds, quickly", async () => {
    for (const [kind, label] of kinds) {
      const mermaid = mermaidOf(BIG, kind);
      const started = performance.now();
      const html = await render({ mermaid, label });
      const took = performance.now() - started;
      expect(took, kind).toBeLessThan(1500);
      expect(html, kind).not.toContain(FALLBACK);
      const [, w, h] = /viewBox="0 0 ([\d.]+) ([\d.]+)"/.exec(html)!;
      expect(Number(w), kind).toBeLessThan(6000);
      expect(Number(h), kind).toBeLessThan(30_000);
      if (kind === "dependencies") expect(html.match(/<g class="mm-node">/g)).toHaveLength(200);
      if (kind === "gantt") expect(html.match(/<g class="mm-task">/g)).toHaveLength(200);
    }
  });

  it("shows only the note and the source for text it does not draw, and never throws", async () => {
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const pieces = [
      "flowchart TD",
      "flowchart LR",
      "gantt",
      'subgraph g["x"]',
      "end",
      "a --> b",
      "b ==> a",
      'a["#60;"]:::k',
      "classDef k fill:#000",
      "class a,b k",
      "a :t1, 0, 1s",
      "section s",
      "%%{init}%%",
      "  ",
      '"]',
      "[[",
      ":::",
      "after",
      "#99999999;",
    ];
    const cases = [
      Array.from({ length: 200 }, () => pieces[Math.floor(random() * pieces.length)]).join("\n"),
      Array.from({ length: 300 }, () => String.fromCharCode(...Array.from({ length: 20 }, () => Math.floor(random() * 0x3000)))).join("\n"),
      `flowchart TD\n${'  n["x"]\n'.repeat(7000)}`,
      "flowchart TD\n  a --> b\n  linkStyle 0 stroke:#f00",
      "",
      "pie\n  title <script>alert(1)</script>",
    ];
    for (let i = 0; i < 200; i++) cases.push(Array.from({ length: 30 }, () => pieces[Math.floor(random() * pieces.length)]).join("\n"));
    let fallbacks = 0;
    for (const mermaid of cases) {
      const html = await render({ mermaid, label: "Any" });
      expect(html.startsWith('<figure class="diagram')).toBe(true);
      if (html.includes(FALLBACK)) {
        fallbacks++;
        expect(html).not.toContain("<svg");
        expect(html).not.toContain("<details>");
      } else expect(html).toContain("<svg");
    }
    expect(fallbacks).toBeGreaterThan(100);
    for (const mermaid of cases.slice(1, 6)) expect(await render({ mermaid, label: "Any" })).toContain(FALLBACK);
    const big = await render({ mermaid: cases[2]!, label: "Any" });
    expect(big).toContain(`<pre><code>flowchart TD\n  n[&quot;x&quot;]`);
    // Shown cut to MAX_SOURCE_CHARS, not all 63,000 characters.
    expect(big).toContain("…</code></pre></figure>");
    expect(big.split("n[&quot;x&quot;]").length - 1).toBe(Math.floor((MAX_SOURCE_CHARS - 13) / 9));
    const pie = await render({ mermaid: cases[5]!, label: "Any" });
    expect(pie).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(pie).not.toContain("<script");
  });
});
