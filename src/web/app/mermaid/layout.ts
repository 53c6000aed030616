/**
 * Where a flowchart's boxes and arrows go, as a pure function of the parsed chart (the same chart
 * always lays out the same way). A small layered layout in the Sugiyama manner:
 *
 * 1. Cycles are broken by turning the back edges a depth-first walk finds (draw.ts never writes
 *    one, but a caller's text may).
 * 2. Longest-path layering: sources in layer 0, every other node one past its deepest predecessor,
 *    so every arrow runs from a lower layer to a higher one; a node without arrows joins its
 *    subgraph's first layer. TD: layers are rows; LR: columns.
 * 3. An arrow that spans several layers passes through a placeholder in each layer between, so it
 *    runs through a gap between boxes rather than across one (up to MAX_PLACEHOLDERS of them).
 * 4. Order within layers: a couple of barycenter sweeps down and up, each keeping a subgraph's
 *    members next to each other, ties broken by the current order.
 * 5. Each layer is centred on the others; subgraphs whose members share a layer get a labelled box
 *    (room for it is left between neighbours); subgraphs that span layers are shown as a coloured
 *    stripe on their members and a legend, since boxes around them would overlap.
 *
 * Work is linear in nodes, arrows and placeholders, times the sweeps.
 */
import type { Flowchart } from "./parse";
import { clipToWidth, textWidth } from "./text";

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface PlacedNode extends Box {
  layer: number;
  /** The label as drawn: cut to fit the box. */
  text: string;
}

export interface PlacedEdge {
  from: number;
  to: number;
  critical: boolean;
  /** Where the arrow starts and where its head is, after any turn a broken cycle needed. */
  start: [number, number];
  end: [number, number];
  /** SVG path data. */
  d: string;
}

export interface PlacedGroup {
  label: string;
  /** The label as drawn in the box or the legend. */
  text: string;
  /** Boxes: the frame around the members, its label in the top band. */
  box?: Box;
  /** Stripes: the members' stripe colour and the legend's swatch position. */
  colour?: string;
  legend?: { x: number; y: number };
}

export interface FlowLayout {
  width: number;
  height: number;
  layers: number;
  groupStyle: "none" | "boxes" | "stripes";
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  groups: PlacedGroup[];
}

export const NODE_H = 36;
/** The stripe a member of a layer-spanning subgraph carries on its left edge. */
export const STRIPE_W = 6;
/** Mid-tone hues that read on the light and the dark background alike. */
export const GROUP_COLOURS = ["#0969da", "#bf3989", "#1a7f37", "#bc4c00", "#8250df", "#1b7c83", "#9a6700", "#cf222e"];
export const LEGEND_ROW_H = 20;

const PAD_X = 10;
const MIN_W = 90;
const MAX_W = { TD: 240, LR: 260 };
const GAP = { TD: 24, LR: 12 };
const LAYER_GAP = { TD: 48, LR: 90 };
const PLACEHOLDER = 8;
const PLACEHOLDER_GAP = 8;
/** A subgraph box's padding around its members, and the band its label sits in. */
const BOX_PAD = 10;
const HEADER = 20;
const MARGIN = 12;
const LOOP = 20;
const LEGEND_ENTRY_W = 220;
const LEGEND_MIN_COLUMNS = 3;
const MAX_PLACEHOLDERS = 5000;
const SWEEPS = 2;

/** Each node's layer, and which arrows were turned to break cycles. */
export function layering(chart: Flowchart): { layer: number[]; reversed: boolean[] } {
  const n = chart.nodes.length;
  const edges = chart.edges;
  const out: number[][] = chart.nodes.map(() => []);
  edges.forEach((e, k) => {
    if (e.from !== e.to) out[e.from]!.push(k);
  });
  // Iterative depth-first walk: an arrow to a node still on the walk's path closes a cycle.
  const state = new Uint8Array(n);
  const reversed = edges.map(() => false);
  for (let root = 0; root < n; root++) {
    if (state[root] !== 0) continue;
    state[root] = 1;
    const stack = [root];
    const next = [0];
    while (stack.length > 0) {
      const top = stack.length - 1;
      const v = stack[top]!;
      const i = next[top]!;
      if (i < out[v]!.length) {
        next[top] = i + 1;
        const k = out[v]![i]!;
        const w = edges[k]!.to;
        if (state[w] === 1) reversed[k] = true;
        else if (state[w] === 0) {
          state[w] = 1;
          stack.push(w);
          next.push(0);
        }
      } else {
        state[v] = 2;
        stack.pop();
        next.pop();
      }
    }
  }
  // Longest path from the sources, in topological order.
  const succ: number[][] = chart.nodes.map(() => []);
  const indegree = new Uint32Array(n);
  edges.forEach((e, k) => {
    if (e.from === e.to) return;
    const [u, v] = reversed[k] ? [e.to, e.from] : [e.from, e.to];
    succ[u]!.push(v);
    indegree[v]!++;
  });
  const linked = new Uint8Array(n);
  for (const e of edges) if (e.from !== e.to) linked[e.from] = linked[e.to] = 1;
  const layer = new Array<number>(n).fill(0);
  const queue: number[] = [];
  for (let v = 0; v < n; v++) if (indegree[v] === 0) queue.push(v);
  for (let head = 0; head < queue.length; head++) {
    const u = queue[head]!;
    for (const v of succ[u]!) {
      layer[v] = Math.max(layer[v]!, layer[u]! + 1);
      if (--indegree[v]! === 0) queue.push(v);
    }
  }
  // A node without arrows can sit in any layer: in its subgraph's first, so the subgraph stays in
  // one layer (an architecture diagram's files whose links were left out stay beside the others).
  for (const g of chart.groups) {
    const home = Math.min(...g.members.filter((m) => linked[m]).map((m) => layer[m]!));
    if (Number.isFinite(home)) for (const m of g.members) if (!linked[m]) layer[m] = home;
  }
  return { layer, reversed };
}

const round = (n: number) => Math.round(n * 10) / 10;

export function layoutFlowchart(chart: Flowchart): FlowLayout {
  const td = chart.direction === "TD";
  const dir = chart.direction;
  const { layer, reversed } = layering(chart);
  const layerCount = chart.nodes.length === 0 ? 0 : Math.max(...layer) + 1;
  const spans = chart.groups.some((g) => g.members.some((m) => layer[m] !== layer[g.members[0]!]));
  const groupStyle = chart.groups.length === 0 ? "none" : spans ? "stripes" : "boxes";
  const boxes = groupStyle === "boxes";
  const stripe = groupStyle === "stripes" ? STRIPE_W : 0;

  const texts = chart.nodes.map((nd) => clipToWidth(nd.label, MAX_W[dir] - 2 * PAD_X - stripe));
  const widths = texts.map((t) => Math.max(MIN_W, textWidth(t) + 2 * PAD_X + stripe));

  // Vertices: the nodes first (vertex i is node i), then the placeholders.
  const vLayer = [...layer];
  const vGroup = chart.nodes.map((nd) => nd.group ?? -1);
  const preds: number[][] = chart.nodes.map(() => []);
  const succs: number[][] = chart.nodes.map(() => []);
  const link = (a: number, b: number) => {
    succs[a]!.push(b);
    preds[b]!.push(a);
  };
  let placeholders = 0;
  chart.edges.forEach((e) => {
    if (e.from !== e.to) placeholders += Math.abs(layer[e.to]! - layer[e.from]!) - 1;
  });
  const throughGaps = placeholders <= MAX_PLACEHOLDERS;
  const chains = chart.edges.map((e, k) => {
    if (e.from === e.to) return [];
    const [u, v] = reversed[k] ? [e.to, e.from] : [e.from, e.to];
    const chain = [u];
    if (throughGaps) {
      for (let l = layer[u]! + 1; l < layer[v]!; l++) {
        const p = vLayer.length;
        vLayer.push(l);
        vGroup.push(-1);
        preds.push([]);
        succs.push([]);
        link(chain[chain.length - 1]!, p);
        chain.push(p);
      }
    }
    link(chain[chain.length - 1]!, v);
    chain.push(v);
    return chain;
  });
  const isNode = (v: number) => v < chart.nodes.length;

  // First order: declaration order, each subgraph's members gathered where its first member is.
  const groupFirst = chart.groups.map((g) => Math.min(...g.members));
  const order: number[][] = Array.from({ length: layerCount }, () => []);
  const initialKey = (v: number) => (isNode(v) ? (vGroup[v]! >= 0 ? groupFirst[vGroup[v]!]! : v) : v);
  const byInitial = vLayer.map((_, v) => v).sort((a, b) => initialKey(a) - initialKey(b) || a - b);
  for (const v of byInitial) order[vLayer[v]!]!.push(v);
  // Positions centred on the layer's middle, so layers of different sizes compare.
  const pos = new Float64Array(vLayer.length);
  const place = (l: number) => order[l]!.forEach((v, i) => (pos[v] = i - (order[l]!.length - 1) / 2));
  for (let l = 0; l < layerCount; l++) place(l);

  const unitKey = (v: number) => (vGroup[v]! >= 0 ? vGroup[v]! : -1 - v);
  const bary = new Float64Array(vLayer.length);
  const sweep = (l: number, neighbours: number[][]) => {
    const units = new Map<number, number[]>();
    for (const v of order[l]!) {
      const nb = neighbours[v]!;
      let sum = 0;
      for (const u of nb) sum += pos[u]!;
      bary[v] = nb.length > 0 ? sum / nb.length : pos[v]!;
      const key = unitKey(v);
      const unit = units.get(key);
      if (unit) unit.push(v);
      else units.set(key, [v]);
    }
    const ranked = [...units.values()].map((members) => {
      members.sort((a, b) => bary[a]! - bary[b]! || pos[a]! - pos[b]!);
      let sum = 0;
      for (const m of members) sum += bary[m]!;
      return { members, at: sum / members.length, first: pos[members[0]!]! };
    });
    ranked.sort((a, b) => a.at - b.at || a.first - b.first);
    order[l] = ranked.flatMap((u) => u.members);
    place(l);
  };
  for (let pass = 0; pass < SWEEPS; pass++) {
    for (let l = 1; l < layerCount; l++) sweep(l, preds);
    for (let l = layerCount - 2; l >= 0; l--) sweep(l, succs);
  }

  // Coordinates: along each layer (x in TD, y in LR), then across layers.
  const extent = (v: number) => (!isNode(v) ? PLACEHOLDER : td ? widths[v]! : NODE_H);
  const headerAlong = boxes && !td ? HEADER : 0;
  const along = new Float64Array(vLayer.length);
  const layerLength = order.map((vs) => {
    let at = 0;
    vs.forEach((v, i) => {
      const grouped = vGroup[v]! >= 0;
      if (i === 0) at += boxes && grouped ? BOX_PAD + headerAlong : 0;
      else {
        const prev = vs[i - 1]!;
        at += isNode(v) && isNode(prev) ? GAP[dir] : PLACEHOLDER_GAP;
        if (boxes && unitKey(prev) !== unitKey(v) && (grouped || vGroup[prev]! >= 0)) at += 2 * BOX_PAD + (grouped ? headerAlong : 0);
      }
      along[v] = at;
      at += extent(v);
    });
    return at + (boxes && vs.length > 0 && vGroup[vs[vs.length - 1]!]! >= 0 ? BOX_PAD : 0);
  });
  const longest = Math.max(0, ...layerLength);
  order.forEach((vs, l) => vs.forEach((v) => (along[v]! += (longest - layerLength[l]!) / 2)));
  const thickness = order.map((vs) => (td ? NODE_H : Math.max(PLACEHOLDER, ...vs.filter(isNode).map((v) => widths[v]!))));
  const layerGap = LAYER_GAP[dir] + (boxes && td ? 2 * BOX_PAD + HEADER : 0);
  const layerStart: number[] = [];
  thickness.reduce((at, t, l) => {
    layerStart[l] = at;
    return at + t + layerGap;
  }, 0);

  const nodes: PlacedNode[] = chart.nodes.map((_, v) => {
    const l = vLayer[v]!;
    const w = widths[v]!;
    return td ? { layer: l, text: texts[v]!, x: along[v]!, y: layerStart[l]!, w, h: NODE_H } : { layer: l, text: texts[v]!, x: layerStart[l]! + (thickness[l]! - w) / 2, y: along[v]!, w, h: NODE_H };
  });

  const groups: PlacedGroup[] = chart.groups.map((g, gi) => {
    if (!boxes) return { label: g.label, text: "", colour: GROUP_COLOURS[gi % GROUP_COLOURS.length]! };
    const members = g.members.map((m) => nodes[m]!);
    const x = Math.min(...members.map((m) => m.x)) - BOX_PAD;
    const y = Math.min(...members.map((m) => m.y)) - BOX_PAD - HEADER;
    const w = Math.max(...members.map((m) => m.x + m.w)) + BOX_PAD - x;
    const h = Math.max(...members.map((m) => m.y + m.h)) + BOX_PAD - y;
    return { label: g.label, text: clipToWidth(g.label, w - 16), box: { x, y, w, h } };
  });

  // Move everything inside the margin, below the legend when there is one.
  const frames = [...nodes, ...groups.flatMap((g) => (g.box ? [g.box] : []))];
  const selfLoop = chart.edges.some((e) => e.from === e.to) ? LOOP : 0;
  const minX = Math.min(0, ...frames.map((b) => b.x));
  const minY = Math.min(0, ...frames.map((b) => b.y));
  const drawnW = Math.max(0, ...frames.map((b) => b.x + b.w)) + selfLoop - minX;
  const drawnH = Math.max(0, ...frames.map((b) => b.y + b.h)) - minY;
  let legendH = 0;
  let legendW = 0;
  if (groupStyle === "stripes") {
    const columns = Math.min(groups.length, Math.max(LEGEND_MIN_COLUMNS, Math.floor(drawnW / LEGEND_ENTRY_W)));
    groups.forEach((g, i) => {
      g.text = clipToWidth(g.label, LEGEND_ENTRY_W - 24);
      g.legend = { x: MARGIN + (i % columns) * LEGEND_ENTRY_W, y: MARGIN + Math.floor(i / columns) * LEGEND_ROW_H };
    });
    legendW = columns * LEGEND_ENTRY_W;
    legendH = Math.ceil(groups.length / columns) * LEGEND_ROW_H + MARGIN;
  }
  const dx = MARGIN - minX;
  const dy = MARGIN + legendH - minY;
  for (const b of frames) {
    b.x = round(b.x + dx);
    b.y = round(b.y + dy);
  }
  const vAlong = (v: number) => along[v]! + extent(v) / 2 + (td ? dx : dy);
  const vStart = (v: number) => layerStart[vLayer[v]!]! + (td ? dy : dx);

  /**
   * Where an arrow crosses the edge of a vertex's layer band, leaving toward the next layer or
   * coming in from the one before. Between bands an arrow curves; inside a band it runs straight,
   * so it never crosses a box: in an LR column, boxes narrower than the column are centred, and the
   * arrow runs straight from the box's side to the column's edge.
   */
  const bandExit = (v: number): [number, number] => {
    const across = vStart(v) + thickness[vLayer[v]!]!;
    return td ? [vAlong(v), across] : [across, vAlong(v)];
  };
  const bandEnter = (v: number): [number, number] => (td ? [vAlong(v), vStart(v)] : [vStart(v), vAlong(v)]);
  const sideOut = (b: Box): [number, number] => (td ? [b.x + b.w / 2, b.y + b.h] : [b.x + b.w, b.y + b.h / 2]);
  const sideIn = (b: Box): [number, number] => (td ? [b.x + b.w / 2, b.y] : [b.x, b.y + b.h / 2]);

  const edges: PlacedEdge[] = chart.edges.map((e, k) => {
    const base = { from: e.from, to: e.to, critical: e.critical };
    if (e.from === e.to) {
      const b = nodes[e.from]!;
      const [x, y] = [round(b.x + b.w), round(b.y + b.h / 2)];
      return { ...base, start: [x, y - 8], end: [x, y + 8], d: `M${x},${y - 8} C${x + LOOP},${y - 20} ${x + LOOP},${y + 20} ${x},${y + 8}` };
    }
    const chain = chains[k]!;
    const first = chain[0]!;
    const last = chain[chain.length - 1]!;
    // Straight runs (even segments) inside bands, curves (odd segments) between them.
    const points: Array<[number, number]> = [sideOut(nodes[first]!), bandExit(first)];
    for (let i = 1; i < chain.length - 1; i++) points.push(bandEnter(chain[i]!), bandExit(chain[i]!));
    points.push(bandEnter(last), sideIn(nodes[last]!));
    if (reversed[k]) points.reverse();
    const p = points.map(([x, y]) => [round(x), round(y)] as [number, number]);
    let d = `M${p[0]![0]},${p[0]![1]}`;
    for (let i = 0; i + 1 < p.length; i++) {
      const [x0, y0] = p[i]!;
      const [x1, y1] = p[i + 1]!;
      if (i % 2 === 0) {
        // A zero-length run would leave the arrowhead without a direction.
        if (x0 !== x1 || y0 !== y1) d += ` L${x1},${y1}`;
      } else if (td) d += ` C${x0},${round((y0 + y1) / 2)} ${x1},${round((y0 + y1) / 2)} ${x1},${y1}`;
      else d += ` C${round((x0 + x1) / 2)},${y0} ${round((x0 + x1) / 2)},${y1} ${x1},${y1}`;
    }
    return { ...base, start: p[0]!, end: p[p.length - 1]!, d };
  });

  return {
    width: round(Math.max(drawnW, legendW) + 2 * MARGIN),
    height: round(drawnH + legendH + 2 * MARGIN),
    layers: layerCount,
    groupStyle,
    nodes,
    edges,
    groups,
  };
}
