/**
 * The projects list and a project's board: lanes (ready, blocked, in progress, in review, done) with
 * their counts, a GET form of filters, and cards that show their dependencies' status and their
 * lease. Data comes from the tools; this only draws it.
 */
import { Choice, HeadRow } from "./fields";
import { AppLayout, type Viewer } from "./layout";
import { relative, text } from "./overview";

type Row = Record<string, unknown>;

export const LANES = [
  { id: "ready", label: "Ready" },
  { id: "blocked", label: "Blocked" },
  { id: "in_progress", label: "In progress" },
  { id: "in_review", label: "In review" },
  { id: "done", label: "Done" },
] as const;
export type LaneId = (typeof LANES)[number]["id"];

export interface Card {
  task: Row;
  assignee: string;
  /** The open dependencies it waits on; undefined when they were not read (past the page's bound). */
  blockers?: Row[];
}

export interface BoardFilters {
  label: string;
  assignee: string;
  repository: string;
  plan: string;
}

export interface BoardData {
  now: Date;
  project: Row;
  lanes: Record<LaneId, { cards: Card[]; more: boolean }>;
  filters: BoardFilters;
  options: { actors: Row[]; repos: Row[]; plans: Row[] };
  /** More open tasks than the board reads: counts are of the first ones. */
  truncated: boolean;
}

const STATUS_WORDS: Record<string, string> = { todo: "to do", in_progress: "in progress", in_review: "in review", done: "done", cancelled: "cancelled" };
export const statusWord = (s: unknown) => STATUS_WORDS[text(s)] ?? text(s);
export const taskHref = (t: Row) => `/app/tasks/${encodeURIComponent(text(t.id))}`;

export function ProjectsPage(props: { viewer: Viewer; projects: Row[] }) {
  return (
    <AppLayout title="Projects" viewer={props.viewer} current="/app/projects">
      <h1>Projects</h1>
      {props.projects.length ? (
        <div class="scroll">
          <table>
            <HeadRow cols={["Project", "Status", "To do", "Blocked", "In progress", "In review", "Done"]} />
            <tbody>
              {props.projects.map((p) => {
                const counts = (p.task_counts ?? {}) as Row;
                const by = (counts.by_status ?? {}) as Row;
                return (
                  <tr>
                    <th scope="row">
                      <a href={`/app/projects/${encodeURIComponent(text(p.key))}`}>{text(p.key)}</a> <span class="muted">{text(p.title)}</span>
                    </th>
                    <td>{text(p.status)}</td>
                    <td>{text(by.todo ?? 0)}</td>
                    <td>{text(counts.blocked ?? 0)}</td>
                    <td>{text(by.in_progress ?? 0)}</td>
                    <td>{text(by.in_review ?? 0)}</td>
                    <td>{text(by.done ?? 0)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="muted">No projects yet.</p>
      )}
    </AppLayout>
  );
}

function BoardCard(props: { card: Card; now: Date }) {
  const t = props.card.task;
  const labels = Array.isArray(t.labels) ? (t.labels as string[]) : [];
  const blockers = props.card.blockers;
  return (
    <li class="task-card">
      <a href={taskHref(t)}>
        <strong>{text(t.ref)}</strong> {text(t.title)}
      </a>
      <div class="muted">
        <span class="pill">P{text(t.priority)}</span> {props.card.assignee ? props.card.assignee : "unassigned"}
        {t.lease_expires_at ? <span> · lease {relative(text(t.lease_expires_at), props.now)}</span> : null}
      </div>
      {labels.length ? (
        <div>
          {labels.map((l) => (
            <span class="pill">{l}</span>
          ))}
        </div>
      ) : null}
      {t.state === "blocked" ? (
        <div class="warn">{blockers === undefined ? "blocked by open dependencies" : `blocked by ${blockers.map((b) => `${text(b.ref)} (${statusWord(b.status)})`).join(", ")}`}</div>
      ) : t.state === "ready" ? (
        <div class="muted">no open dependencies</div>
      ) : null}
    </li>
  );
}

/** The five lanes with their counts: the board's part the live script refreshes. */
export function Lanes(props: { data: BoardData }) {
  const { data } = props;
  return (
    <>
      {LANES.map((lane) => {
        const l = data.lanes[lane.id];
        return (
          <section class="lane card" aria-labelledby={`lane-${lane.id}`}>
            <h2 id={`lane-${lane.id}`}>
              {lane.label}{" "}
              <span class="pill">
                {l.cards.length}
                {l.more ? "+" : ""}
              </span>
            </h2>
            {l.cards.length ? (
              <ul class="plain">
                {l.cards.map((card) => (
                  <BoardCard card={card} now={data.now} />
                ))}
              </ul>
            ) : (
              <p class="muted">None.</p>
            )}
          </section>
        );
      })}
    </>
  );
}

/** The board's lanes alone, with the same filters, for the live script. */
export const liveBoardHref = (key: string, f: BoardFilters) => {
  const q = new URLSearchParams(Object.entries(f).filter(([, v]) => v));
  return `/app/live/board/${encodeURIComponent(key)}${q.size ? `?${q.toString()}` : ""}`;
};

export function BoardPage(props: { viewer: Viewer; data: BoardData }) {
  const { data } = props;
  const key = text(data.project.key);
  const f = data.filters;
  const actorName = (a: Row) => text(a.display_name || a.external_ref || a.id);
  return (
    <AppLayout title={`${key} board`} viewer={props.viewer} current="/app/projects">
      <h1>
        {key} <span class="muted">{text(data.project.title)}</span>
      </h1>
      <form method="get" action={`/app/projects/${encodeURIComponent(key)}`} class="filters" aria-label="Filters">
        <label>
          Label
          <input type="text" name="label" value={f.label} maxlength={50} />
        </label>
        <Choice
          name="assignee"
          label="Assignee"
          value={f.assignee}
          options={[["me", "me"], ["unassigned", "unassigned"], ...data.options.actors.map((a): [string, string] => [text(a.id), actorName(a)])]}
        />
        <Choice name="repository" label="Repository" value={f.repository} options={data.options.repos.map((r): [string, string] => [text(r.slug), text(r.slug)])} />
        <Choice name="plan" label="Plan" value={f.plan} options={data.options.plans.map((p): [string, string] => [text(p.id), text(p.name)])} />
        <div class="filter-actions">
          <button type="submit">Filter</button> <a href={`/app/projects/${encodeURIComponent(key)}`}>Clear</a>
        </div>
      </form>
      {data.truncated ? <p class="warn">This project has more open tasks than the board shows; narrow it with the filters.</p> : null}
      <div class="lanes" id="lanes" data-live={liveBoardHref(key, f)}>
        <Lanes data={data} />
      </div>
    </AppLayout>
  );
}
