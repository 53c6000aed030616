/**
 * A laid-out flowchart as inline SVG. The page's CSP allows no style attributes, so classDef
 * colours go in as presentation attributes, and everything else takes its colour from classes in
 * the app stylesheet, which follow the light or dark theme. A stylesheet rule beats a presentation
 * attribute, so a shape carries a themed class only for what its classDef leaves unset.
 */
import type { ClassStyle, Flowchart } from "./parse";
import { LEGEND_ROW_H, STRIPE_W, type FlowLayout } from "./layout";
import { textWidth } from "./text";

/** The styles of a node's classes merged, later classes winning, as Mermaid applies them. */
function nodeStyle(chart: Flowchart, classes: readonly string[]): ClassStyle {
  const merged: ClassStyle = {};
  for (const name of classes) {
    const style = chart.styles.get(name);
    if (!style) continue;
    for (const [key, value] of Object.entries(style) as Array<[keyof ClassStyle, string | undefined]>) if (value !== undefined) merged[key] = value;
  }
  return merged;
}

/** How light a `#rgb` or `#rrggbb` colour is, 0 to 1; undefined for a colour's name. */
function lightness(colour: string): number | undefined {
  if (!colour.startsWith("#")) return undefined;
  const hex = colour.length <= 5 ? [...colour.slice(1, 4)].map((c) => c + c).join("") : colour.slice(1, 7);
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/**
 * The text's colour class: the theme's own colour on an unfilled node; on a filled one, dark text
 * on a light fill and light text on a dark fill in either theme, since the fill does not change
 * with the theme. A classDef `color` is used as given.
 */
function inkClass(style: ClassStyle): string | undefined {
  if (style.color) return undefined;
  if (!style.fill) return "mm-ink";
  return (lightness(style.fill) ?? 1) > 0.45 ? "mm-ink-dark" : "mm-ink-light";
}

/** The shape's themed classes for what its style leaves unset. */
const shapeClass = (style: ClassStyle) => [style.fill ? "" : "mm-fill", style.stroke ? "" : "mm-stroke"].filter(Boolean).join(" ") || undefined;

export function flowchartSvg(chart: Flowchart, layout: FlowLayout, ids: { prefix: string; title: string }) {
  const arrow = `${ids.prefix}-arrow`;
  const criticalArrow = `${ids.prefix}-arrow-critical`;
  return (
    <svg class="mm-svg" viewBox={`0 0 ${layout.width} ${layout.height}`} width={layout.width} height={layout.height} role="img" aria-labelledby={`${ids.prefix}-title`}>
      <title id={`${ids.prefix}-title`}>{ids.title}</title>
      <defs>
        <marker id={arrow} viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto-start-reverse">
          <path d="M0,0 L10,5 L0,10 z" class="mm-arrowhead" />
        </marker>
        <marker id={criticalArrow} viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="12" markerHeight="12" orient="auto-start-reverse">
          <path d="M0,0 L10,5 L0,10 z" class="mm-arrowhead mm-arrowhead-critical" />
        </marker>
      </defs>
      {layout.groupStyle === "stripes" ? (
        <g class="mm-legend">
          {layout.groups.map((g) => (
            <g>
              <title>{g.label}</title>
              <rect x={g.legend!.x} y={g.legend!.y + 3} width="12" height="12" rx="2" fill={g.colour} />
              <text x={g.legend!.x + 18} y={g.legend!.y + LEGEND_ROW_H / 2 + 4}>
                {g.text}
              </text>
            </g>
          ))}
        </g>
      ) : null}
      {layout.groups.map((g) => (g.box ? <rect class="mm-group" x={g.box.x} y={g.box.y} width={g.box.w} height={g.box.h} rx="8" /> : null))}
      {layout.edges.map((e) => (
        <path class={e.critical ? "mm-edge edge-critical" : "mm-edge"} d={e.d} marker-end={`url(#${e.critical ? criticalArrow : arrow})`} />
      ))}
      {/* A subgraph's label over the arrows that come into its members, on a backing of the box's own colour. */}
      {layout.groups.map((g) =>
        g.box ? (
          <g class="mm-group-label">
            <title>{g.label}</title>
            <rect x={g.box.x + 4} y={g.box.y + 3} width={Math.min(textWidth(g.text) + 8, g.box.w - 8)} height="16" rx="3" />
            <text x={g.box.x + 8} y={g.box.y + 15}>
              {g.text}
            </text>
          </g>
        ) : null,
      )}
      {layout.nodes.map((b, i) => {
        const node = chart.nodes[i]!;
        const style = nodeStyle(chart, node.classes);
        const group = node.group === undefined ? undefined : layout.groups[node.group];
        const stripe = group?.colour;
        return (
          <g class="mm-node">
            <title>{group && stripe ? `${node.label} (${group.label})` : node.label}</title>
            <rect
              x={b.x}
              y={b.y}
              width={b.w}
              height={b.h}
              rx="6"
              class={shapeClass(style)}
              fill={style.fill}
              stroke={style.stroke}
              stroke-width={style.stroke ? (style.strokeWidth ?? "1.5") : undefined}
              stroke-dasharray={style.dasharray}
            />
            {stripe ? <rect x={b.x} y={b.y} width={STRIPE_W} height={b.h} rx="3" fill={stripe} /> : null}
            <text x={b.x + (stripe ? STRIPE_W : 0) + (b.w - (stripe ? STRIPE_W : 0)) / 2} y={b.y + b.h / 2 + 4} text-anchor="middle" class={inkClass(style)} fill={style.color}>
              {b.text}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
