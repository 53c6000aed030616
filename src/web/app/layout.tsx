/**
 * The dashboard's frame: server-rendered Hono JSX (every value escaped), plain links and forms that
 * work without script, light and dark from the system's preference, down to a phone's width.
 */
import type { Child } from "hono/jsx";
import { PageHead } from "../head";
import { CSRF_FIELD } from "../security";
import { LIVE_SCRIPT_PATH } from "./live";

/** The outcome of the last form, shown once on the page the form returned to. */
export interface Flash {
  ok: boolean;
  message: string;
  hint?: string;
}

export function FlashNote(props: { flash?: Flash }) {
  const f = props.flash;
  if (!f) return null;
  return f.ok ? (
    <p class="card flash good" role="status">
      {f.message}
    </p>
  ) : (
    <div class="card flash error" role="alert">
      <p>{f.message}</p>
      {f.hint ? <p class="muted">{f.hint}</p> : null}
    </div>
  );
}

export const APP_STYLESHEET_PATH = "/app/style.css";

export interface Viewer {
  name: string;
  tenant: string;
  access: "full" | "readonly";
  csrf: string;
  /** An operator key's session: may send overseer messages and override leases. */
  operator?: boolean;
  /** The outcome of the form that led here, shown once. */
  flash?: Flash;
}

const NAV: Array<[string, string]> = [
  ["/app", "Overview"],
  ["/app/projects", "Projects"],
  ["/app/plans", "Plans"],
  ["/app/decisions", "Decisions"],
  ["/app/changes", "Changes"],
  ["/app/knowledge", "Knowledge"],
  ["/app/inbox", "Inbox"],
  ["/app/runs", "Runs"],
  ["/app/code", "Code"],
];

export function AppLayout(props: { title: string; viewer?: Viewer; current?: string; children: Child }) {
  return (
    <html lang="en">
      <PageHead title={props.title} stylesheet={APP_STYLESHEET_PATH}>
        {props.viewer ? <script src={LIVE_SCRIPT_PATH} defer /> : null}
      </PageHead>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        {props.viewer ? (
          <header>
            <nav aria-label="Dashboard">
              <strong class="brand">agent-ledger</strong>
              <ul>
                {NAV.map(([href, label]) => (
                  <li>
                    <a href={href} aria-current={props.current === href ? "page" : undefined}>
                      {label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
            <form method="post" action="/app/signout" class="who">
              <span>
                {props.viewer.name} · {props.viewer.tenant}
                {props.viewer.access === "readonly" ? " · read-only" : ""}
              </span>
              <input type="hidden" name={CSRF_FIELD} value={props.viewer.csrf} />
              <button type="submit">Sign out</button>
            </form>
          </header>
        ) : null}
        <main id="main">
          <FlashNote flash={props.viewer?.flash} />
          {props.children}
        </main>
      </body>
    </html>
  );
}

export const APP_STYLESHEET = `
:root { color-scheme: light dark; --fg: #1f2328; --bg: #fff; --muted: #59636e; --line: #d1d9e0; --card: #f6f8fa; --accent: #0969da; --warn: #9a6700; --bad: #cf222e; --good: #1a7f37;
  font-family: system-ui, sans-serif; line-height: 1.5; }
@media (prefers-color-scheme: dark) { :root { --fg: #f0f6fc; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --card: #151b23; --accent: #4493f8; --warn: #d29922; --bad: #f85149; --good: #3fb950; } }
body { margin: 0; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: .5rem; background: var(--bg); padding: .25rem .5rem; }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; padding: .5rem 1rem; border-bottom: 1px solid var(--line); }
nav ul { display: inline-flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0 0 0 1rem; padding: 0; }
nav a[aria-current=page] { font-weight: 600; text-decoration: none; color: var(--fg); }
.who { display: flex; gap: .5rem; align-items: center; color: var(--muted); font-size: .9rem; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.4rem; margin: .5rem 0 1rem; } h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(18rem, 100%), 1fr)); gap: 1rem; }
.scroll { overflow-x: auto; }
.brand { margin-right: .5rem; }
section.card, .card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
ul.plain { list-style: none; padding: 0; margin: 0; } ul.plain li { padding: .3rem 0; border-bottom: 1px solid var(--line); }
.muted { color: var(--muted); font-size: .9rem; }
.pill { display: inline-block; padding: 0 .45rem; border-radius: 1rem; border: 1px solid var(--line); font-size: .8rem; }
.warn { color: var(--warn); } .bad { color: var(--bad); } .good { color: var(--good); }
.error { border-left: 4px solid var(--bad); padding-left: .75rem; }
label { display: block; margin: .4rem 0; }
input[type=password], input[type=text], select, textarea { width: 100%; box-sizing: border-box; padding: .45rem; font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: .3rem; }
button { font: inherit; padding: .35rem .9rem; border-radius: .4rem; border: 1px solid var(--line); background: var(--card); color: inherit; cursor: pointer; }
button.primary { background: #0969da; color: #fff; border-color: #0969da; }
.flash { margin: 0 0 1rem; } article.card, .flash { overflow-wrap: anywhere; } .body { white-space: pre-line; } .flash p { margin: .2rem 0; }
form.action { margin: .5rem 0; } form.inline { display: inline-block; margin: .25rem .5rem .25rem 0; }
fieldset { border: 1px solid var(--line); border-radius: .4rem; margin: .4rem 0; min-width: 0; }
.narrow { max-width: 30rem; margin: 2rem auto; }
.prose { white-space: pre-wrap; overflow-wrap: anywhere; margin: .25rem 0; } code { overflow-wrap: anywhere; }
pre { max-width: 100%; overflow-x: auto; font-size: .85rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.filters { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(12rem, 100%), 1fr)); gap: 0 1rem; align-items: end; margin-bottom: 1rem; } .filter-actions { padding: .4rem 0; }
.lanes { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(13rem, 100%), 1fr)); gap: .75rem; align-items: start; } .lane h2 { margin-top: 0; }
.stack { display: grid; gap: 1rem; } .stack > * { min-width: 0; } .task-card { overflow-wrap: anywhere; } .task-body { white-space: pre-wrap; overflow-wrap: anywhere; margin: .5rem 0; }
.graph-wrap { overflow-x: auto; } svg.graph { width: 100%; max-width: 50rem; height: auto; font-size: 12px; }
.node rect { fill: var(--bg); stroke: var(--line); stroke-width: 1.5; } .node text { fill: var(--fg); } .node .node-title { fill: var(--muted); }
.node-done rect, .node-cancelled rect { stroke: var(--good); } .node-todo rect { stroke: var(--warn); } .node-in_progress rect, .node-in_review rect { stroke: var(--accent); } .node-current rect { stroke-width: 3; }
.edge { fill: none; stroke: var(--muted); stroke-width: 1.5; } .edge-todo, .edge-in_progress, .edge-in_review { stroke: var(--warn); stroke-dasharray: 5 3; } .arrowhead { fill: var(--muted); }
figure.diagram { margin: .5rem 0 1rem; max-width: 100%; overflow-x: auto; } .diagram .mm-svg { display: block; max-width: none; font: 12px system-ui, sans-serif; } .diagram details { margin-top: .5rem; }
/* Plan diagrams (mermaid/): themed colours for what a classDef leaves unset; text on a classDef's fill stays dark (or light) in both themes, as the fill does. */
.mm-fill { fill: var(--bg); } .mm-stroke { stroke: var(--line); stroke-width: 1.5; } .mm-ink { fill: var(--fg); } .mm-ink-dark { fill: #1f2328; } .mm-ink-light { fill: #fff; }
.mm-edge { fill: none; stroke: var(--muted); stroke-width: 1.5; } .mm-edge.edge-critical { stroke: var(--bad); stroke-width: 3; } .mm-arrowhead { fill: var(--muted); } .mm-arrowhead-critical { fill: var(--bad); }
.mm-group { fill: var(--card); stroke: var(--line); } .mm-group-label rect { fill: var(--card); } .mm-group-label text, .mm-legend text, .mm-axis text { fill: var(--muted); } .mm-heading, .mm-section text { fill: var(--fg); font-weight: 600; }
.mm-section rect { fill: var(--card); } .mm-grid { stroke: var(--line); } .mm-bar { fill: var(--accent); } .mm-bar-crit { fill: var(--bad); }
.progress-line { display: flex; flex-wrap: wrap; gap: .25rem .5rem; align-items: center; } progress { width: 10rem; max-width: 100%; accent-color: var(--good); }
@media (max-width: 40rem) { header { padding: .5rem; } nav ul { margin-left: 0; } main { padding: .5rem; } }
`;
