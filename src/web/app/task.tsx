/**
 * A task's page: the task, its dependency graph drawn as an inline SVG (no script), its gates
 * (acceptance criteria, evidence, the reviewer's verdict, open dependencies), its claim, subtasks,
 * comments, attachments, code refs linked to GitHub, reviews and activity. Data comes from the
 * tools; this only draws it.
 */
import { statusWord, taskHref } from "./board";
import { TaskActions } from "./forms";
import { AppLayout, type Viewer } from "./layout";
import { relative, rows, text } from "./overview";

type Row = Record<string, unknown>;

export interface TaskData {
  now: Date;
  /** task_get's answer. */
  detail: Row;
  /** Every task this one waits on, open or closed. */
  dependencies: Row[];
  dependents: Row[];
  codeRefs: Array<Row & { href: string | null }>;
  attachments: Row[];
  reviews: Row[];
  activity: Row[];
  /** Actor id → the name a person reads. */
  names: Map<string, string>;
}

/** The most nodes a column of the graph draws; the lists under it name every one. */
export const GRAPH_COLUMN_MAX = 25;
const NODE_W = 220;
const NODE_H = 40;
const GAP = 12;
const COL_GAP = 60;

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const statusClass = (s: unknown) => `node node-${text(s)}`;

function GraphNode(props: { task: Row; x: number; y: number; current?: boolean }) {
  const t = props.task;
  const box = (
    <g class={props.current ? `${statusClass(t.status)} node-current` : statusClass(t.status)}>
      <rect x={props.x} y={props.y} width={NODE_W} height={NODE_H} rx="6" />
      <text x={props.x + 8} y={props.y + 16}>
        {clip(`${text(t.ref)} · ${statusWord(t.status)}`, 34)}
      </text>
      <text x={props.x + 8} y={props.y + 32} class="node-title">
        {clip(text(t.title), 34)}
      </text>
    </g>
  );
  return props.current ? box : <a href={taskHref(t)}>{box}</a>;
}

/** Waits-on on the left, the task in the middle, what waits on it on the right; arrows run from a dependency to its dependent. */
export function TaskGraph(props: { task: Row; dependencies: Row[]; dependents: Row[] }) {
  const left = props.dependencies.slice(0, GRAPH_COLUMN_MAX);
  const right = props.dependents.slice(0, GRAPH_COLUMN_MAX);
  const rowsTall = Math.max(left.length, right.length, 1);
  const height = rowsTall * (NODE_H + GAP) + GAP;
  const width = NODE_W * 3 + COL_GAP * 2;
  const yOf = (i: number, n: number) => GAP + i * (NODE_H + GAP) + ((rowsTall - n) * (NODE_H + GAP)) / 2;
  const cx = NODE_W + COL_GAP;
  const cy = yOf(0, 1);
  const rx = cx + NODE_W + COL_GAP;
  const edge = (x1: number, y1: number, x2: number, y2: number) => `M${x1},${y1} C${x1 + COL_GAP / 2},${y1} ${x2 - COL_GAP / 2},${y2} ${x2},${y2}`;
  return (
    <svg class="graph" viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby="graph-title">
      <title id="graph-title">{`${text(props.task.ref)} waits on ${props.dependencies.length} task(s); ${props.dependents.length} task(s) wait on it.`}</title>
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
          <path d="M0,0 L10,5 L0,10 z" class="arrowhead" />
        </marker>
      </defs>
      {left.map((_, i) => (
        <path class={`edge edge-${text(left[i]!.status)}`} d={edge(NODE_W, yOf(i, left.length) + NODE_H / 2, cx, cy + NODE_H / 2)} marker-end="url(#arrow)" />
      ))}
      {right.map((_, i) => (
        <path class="edge" d={edge(cx + NODE_W, cy + NODE_H / 2, rx, yOf(i, right.length) + NODE_H / 2)} marker-end="url(#arrow)" />
      ))}
      {left.map((t, i) => (
        <GraphNode task={t} x={0} y={yOf(i, left.length)} />
      ))}
      <GraphNode task={props.task} x={cx} y={cy} current />
      {right.map((t, i) => (
        <GraphNode task={t} x={rx} y={yOf(i, right.length)} />
      ))}
    </svg>
  );
}

function TaskList(props: { label: string; items: Row[] }) {
  return props.items.length ? (
    <ul class="plain" aria-label={props.label}>
      {props.items.map((t) => (
        <li>
          <a href={taskHref(t)}>{text(t.ref)}</a> {text(t.title)} <span class="pill">{statusWord(t.status)}</span>
        </li>
      ))}
    </ul>
  ) : (
    <p class="muted">None.</p>
  );
}

const Section = (props: { id: string; title: string; children: unknown }) => (
  <section class="card" aria-labelledby={props.id}>
    <h2 id={props.id}>{props.title}</h2>
    {props.children}
  </section>
);

export function TaskPage(props: { viewer: Viewer; data: TaskData }) {
  const { data } = props;
  const d = data.detail;
  const t = (d.task ?? {}) as Row;
  const project = (d.project ?? {}) as Row;
  const evidence = (d.evidence ?? {}) as Row;
  const review = d.review as Row | null;
  const name = (id: unknown) => (id ? (data.names.get(text(id)) ?? text(id)) : "nobody");
  const criteria = rows(t.acceptance_criteria);
  const blockers = rows(d.blockers);
  const labels = Array.isArray(t.labels) ? (t.labels as string[]) : [];
  return (
    <AppLayout title={`${text(t.ref)} ${text(t.title)}`} viewer={props.viewer} current="/app/projects">
      <p class="muted">
        <a href={`/app/projects/${encodeURIComponent(text(project.key))}`}>{text(project.key)}</a> · {text(project.title)}
      </p>
      <h1>
        {text(t.ref)} {text(t.title)}
      </h1>
      <p>
        <span class="pill">{statusWord(t.status)}</span> <span class={t.state === "blocked" ? "pill warn" : "pill"}>{text(t.state)}</span> <span class="pill">P{text(t.priority)}</span> assignee{" "}
        {name(t.assignee_actor_id)}
        {t.reviewer_actor_id ? ` · reviewer ${name(t.reviewer_actor_id)}` : ""}
        {t.due_on ? ` · due ${text(t.due_on)}` : ""}
        {labels.map((l) => (
          <span>
            {" "}
            <span class="pill">{l}</span>
          </span>
        ))}
      </p>
      {t.body ? <div class="task-body">{text(t.body)}</div> : null}
      <div class="stack">
        <Section id="graph" title="Dependencies">
          <div class="graph-wrap">
            <TaskGraph task={t} dependencies={data.dependencies} dependents={data.dependents} />
          </div>
          <h3>Waits on</h3>
          <TaskList label="Waits on" items={data.dependencies} />
          <h3>Waited on by</h3>
          <TaskList label="Waited on by" items={data.dependents} />
        </Section>

        <div class="grid">
          <Section id="gates" title="Gates">
            <ul class="plain">
              <li class={blockers.length ? "warn" : "good"}>
                {blockers.length ? `Open dependencies: ${blockers.map((b) => `${text(b.ref)} (${statusWord(b.status)})`).join(", ")}` : "No open dependencies"}
              </li>
              {t.requires_evidence ? (
                <li class={Number(evidence.code_refs) + Number(evidence.attachments) > 0 ? "good" : "warn"}>
                  Evidence required: {text(evidence.code_refs)} code ref(s), {text(evidence.attachments)} attachment(s)
                </li>
              ) : null}
              {t.reviewer_actor_id ? (
                <li class={review?.approved ? "good" : "warn"}>
                  Review by {name(t.reviewer_actor_id)}:{" "}
                  {review ? `${text(review.status)}${review.verdict ? `, ${text(review.verdict)}` : ""}${review.reason ? ` (${text(review.reason)})` : ""}` : "not asked yet"}
                </li>
              ) : null}
            </ul>
            <h3>Acceptance criteria</h3>
            {criteria.length ? (
              <ul class="plain" aria-label="Acceptance criteria">
                {criteria.map((c) => (
                  <li class={c.met ? "good" : ""}>
                    {c.met ? "✓ met: " : "☐ open: "}
                    {text(c.text)}
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">None.</p>
            )}
          </Section>
          <Section id="claim" title="Claim">
            {t.claimed_at ? (
              <p>
                Held by {name(t.assignee_actor_id)} since {relative(text(t.claimed_at), data.now)}, lease {t.lease_expires_at ? relative(text(t.lease_expires_at), data.now) : "none"}.
              </p>
            ) : (
              <p class="muted">Not claimed.</p>
            )}
            <h3>Subtasks</h3>
            <TaskList label="Subtasks" items={rows(d.subtasks)} />
          </Section>
        </div>

        <Section id="reviews" title="Reviews">
          {data.reviews.length ? (
            <ul class="plain">
              {data.reviews.map((h) => (
                <li>
                  <strong>{text(h.title)}</strong> <span class="pill">{text(h.status)}</span>
                  {h.verdict ? <span class={h.verdict === "approved" ? "pill good" : "pill bad"}>{text(h.verdict)}</span> : null}
                  <div class="muted">
                    asked by {name(h.from_actor_id)} of {(Array.isArray(h.to_actor_ids) ? (h.to_actor_ids as string[]) : []).map(name).join(", ")} · {relative(text(h.created_at), data.now)}
                    {h.responded_by ? ` · answered by ${name(h.responded_by)}` : ""}
                  </div>
                  {h.response ? <div class="task-body">{text((h.response as Row).text ?? JSON.stringify(h.response))}</div> : null}
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">No reviews.</p>
          )}
        </Section>

        <div class="grid">
          <Section id="code-refs" title="Code refs">
            {data.codeRefs.length ? (
              <ul class="plain">
                {data.codeRefs.map((r) => (
                  <li>
                    <span class="pill">{text(r.ref_type)}</span> {r.href ? <a href={r.href}>{text(r.title) || text(r.sha || r.branch || r.pr_number)}</a> : text(r.title)}
                    {r.pr_state ? <span class="pill">{text(r.pr_state)}</span> : null} <span class="muted">{relative(text(r.created_at), data.now)}</span>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">None.</p>
            )}
          </Section>
          <Section id="attachments" title="Attachments">
            {data.attachments.length ? (
              <ul class="plain">
                {data.attachments.map((a) => (
                  <li>
                    {a.kind === "link" && /^https?:\/\//i.test(text(a.url)) ? <a href={text(a.url)}>{text(a.title)}</a> : text(a.title)}{" "}
                    <span class="muted">{a.kind === "file" ? `${text(a.filename)} · ${text(a.mime_type)} · ${text(a.size_bytes)} bytes` : text(a.url)}</span>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">None.</p>
            )}
          </Section>
        </div>

        <Section id="comments" title="Comments">
          {rows(d.comments).length ? (
            <ul class="plain">
              {rows(d.comments).map((c) => (
                <li>
                  <strong>{name(c.author_actor_id)}</strong> <span class="muted">{relative(text(c.created_at), data.now)}</span>
                  <div class="task-body">{text(c.body)}</div>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">No comments.</p>
          )}
        </Section>

        <TaskActions task={t} viewer={props.viewer} back={`/app/tasks/${text(t.ref || t.id)}`} />

        <Section id="activity" title="Activity">
          <ul class="plain">
            {data.activity.map((a) => (
              <li>
                <span class="muted">{relative(text(a.at), data.now)}</span> <strong>{text(a.actor_name)}</strong> {text(a.verb)}{" "}
                <span class={a.severity && a.severity !== "info" ? "warn" : ""}>{text(a.summary)}</span>
              </li>
            ))}
          </ul>
        </Section>
      </div>
    </AppLayout>
  );
}
