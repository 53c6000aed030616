/**
 * Runs: the tree of sessions and the subagents forked from them, with what each produced (the
 * run_summary rollup); and one run with its subtree and its activity. Data comes from the tools.
 */
import { Choice, FilterForm, OlderLink, plainOptions } from "./fields";
import type { Run } from "../../work/runs/model";
import { AppLayout, type Viewer } from "./layout";
import { ActivityItems, relative } from "./overview";

export const RUNS_PATH = "/app/runs";
export const runHref = (key: string) => `${RUNS_PATH}/${encodeURIComponent(key)}`;

type Row = Record<string, unknown>;

/** run_summary's counts, as the page shows them. */
export type Produced = Record<"tasks_created" | "tasks_completed" | "decisions_logged" | "knowledge_written" | "handoffs_created" | "code_refs_added" | "activity_total", number>;

const PRODUCED: Array<[keyof Produced, string]> = [
  ["tasks_created", "tasks created"],
  ["tasks_completed", "done"],
  ["decisions_logged", "decisions"],
  ["knowledge_written", "notes"],
  ["handoffs_created", "handoffs"],
  ["code_refs_added", "code refs"],
  ["activity_total", "activity"],
];

const STATUS_CLASS: Record<string, string> = { running: "pill good", succeeded: "pill", failed: "pill bad", cancelled: "pill warn", abandoned: "pill warn" };

export function RunStatus(props: { status: string }) {
  return <span class={STATUS_CLASS[props.status] ?? "pill"}>{props.status}</span>;
}

function ProducedLine(props: { produced?: Produced }) {
  if (!props.produced) return null;
  const parts = PRODUCED.filter(([k]) => props.produced![k] > 0).map(([k, label]) => `${props.produced![k]} ${label}`);
  return <span class="muted">{parts.length ? `Produced: ${parts.join(", ")}` : "Produced nothing recorded yet"}</span>;
}

/** A run's one-line card: what it is, whose, how alive. */
function RunLine(props: { run: Run; now: Date; who: (id: string) => string; produced?: Produced }) {
  const r = props.run;
  return (
    <div class="task-card">
      <RunStatus status={r.status} /> <a href={runHref(r.run_key)}>{r.label || r.run_key}</a> <span class="muted">{r.kind}</span>
      <br />
      <span class="muted">
        {props.who(r.actor_id)}
        {r.agent_role ? ` · ${r.agent_role}` : ""} · {r.ended_at ? `ended ${relative(r.ended_at, props.now)}` : `heartbeat ${relative(r.last_heartbeat_at, props.now)}`}
      </span>
      <br />
      <ProducedLine produced={props.produced} />
    </div>
  );
}

export interface TreeProps {
  runs: Run[];
  now: Date;
  who: (id: string) => string;
  produced: Map<string, Produced>;
}

/** Runs nested under their parents; a run whose parent is not among them starts a tree of its own. */
export function RunTree(props: TreeProps & { parent?: string; seen?: Set<string> }) {
  const ids = new Set(props.runs.map((r) => r.id));
  const seen = props.seen ?? new Set<string>();
  const level = props.runs.filter((r) => (props.parent ? r.parent_run_id === props.parent : !r.parent_run_id || !ids.has(r.parent_run_id)) && !seen.has(r.id));
  if (!level.length) return null;
  for (const r of level) seen.add(r.id);
  return (
    <ul class="plain tree">
      {level.map((r) => (
        <li>
          <RunLine run={r} now={props.now} who={props.who} produced={props.produced.get(r.id)} />
          <RunTree {...props} parent={r.id} seen={seen} />
        </li>
      ))}
    </ul>
  );
}

export interface RunsData extends TreeProps {
  status: string;
  statuses: readonly string[];
  /** The query string of the next (older) page, when there is one. */
  older?: string;
}

export function RunsPage(props: { viewer: Viewer; data: RunsData }) {
  const { data } = props;
  return (
    <AppLayout title="Runs" viewer={props.viewer} current={RUNS_PATH}>
      <h1>Runs</h1>
      <FilterForm action={RUNS_PATH} label="Filter runs" button="Show">
        <Choice name="status" label="Status" any="Any status" value={data.status} options={plainOptions(data.statuses)} />
      </FilterForm>
      <p class="muted">{data.runs.length} run(s), newest first; subagents under the run that forked them.</p>
      {data.runs.length ? <RunTree runs={data.runs} now={data.now} who={data.who} produced={data.produced} /> : <p>No runs match.</p>}
      <OlderLink path={RUNS_PATH} query={data.older} label="Older runs" />
    </AppLayout>
  );
}

export interface RunData {
  now: Date;
  run: Run;
  produced: Produced;
  children: Run[];
  childrenMore: boolean;
  childProduced: Map<string, Produced>;
  activity: Row[];
  who: (id: string) => string;
}

export function RunPage(props: { viewer: Viewer; data: RunData }) {
  const { run: r, now } = props.data;
  return (
    <AppLayout title={r.label || r.run_key} viewer={props.viewer} current={RUNS_PATH}>
      <p>
        <a href={RUNS_PATH}>All runs</a>
      </p>
      <h1>{r.label || r.run_key}</h1>
      <dl class="facts card">
        <dt>Status</dt>
        <dd>
          <RunStatus status={r.status} />
        </dd>
        <dt>Key</dt>
        <dd>
          <code>{r.run_key}</code> · {r.kind}
        </dd>
        <dt>Agent</dt>
        <dd>
          {props.data.who(r.actor_id)}
          {r.agent_role ? ` · ${r.agent_role}` : ""}
        </dd>
        {r.goal ? (
          <>
            <dt>Goal</dt>
            <dd class="prose">{r.goal}</dd>
          </>
        ) : null}
        {r.parent_run_id ? (
          <>
            <dt>Forked from</dt>
            <dd>
              <a href={runHref(r.parent_run_id)}>{r.parent_run_id}</a>
            </dd>
          </>
        ) : null}
        <dt>Started</dt>
        <dd>{relative(r.started_at, now)}</dd>
        <dt>{r.ended_at ? "Ended" : "Heartbeat"}</dt>
        <dd>{relative(r.ended_at ?? r.last_heartbeat_at, now)}</dd>
        {r.branch || r.head_sha ? (
          <>
            <dt>Working on</dt>
            <dd>
              {r.branch ?? ""} {r.head_sha ? <code>{r.head_sha.slice(0, 12)}</code> : null}
              {r.dirty ? " (uncommitted changes)" : ""}
            </dd>
          </>
        ) : null}
      </dl>
      <h2>What it produced</h2>
      <table>
        <tbody>
          {PRODUCED.map(([k, label]) => (
            <tr>
              <th scope="row">{label}</th>
              <td>{props.data.produced[k]}</td>
            </tr>
          ))}
          {Object.entries(r.counts).map(([k, v]) => (
            <tr>
              <th scope="row">{k} (reported)</th>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Subagents</h2>
      {props.data.children.length ? <RunTree runs={props.data.children} now={now} who={props.data.who} produced={props.data.childProduced} parent={r.id} /> : <p>No runs were forked from it.</p>}
      {props.data.childrenMore ? <p class="muted">More runs below it than shown here; run_get pages the rest.</p> : null}
      <h2>Activity</h2>
      {props.data.activity.length ? (
        <ul class="plain" id="run-activity">
          <ActivityItems items={props.data.activity} now={now} />
        </ul>
      ) : (
        <p>No activity attributed to it.</p>
      )}
    </AppLayout>
  );
}
