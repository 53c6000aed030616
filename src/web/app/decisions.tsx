/**
 * The decision log: search and filters (a GET form, so it works without script), each decision's
 * status and its place in a supersede chain; and one decision in full. Data comes from the tools.
 */
import { Choice, FilterForm, OlderLink, plainOptions } from "./fields";
import type { Decision } from "../../work/decisions/model";
import { AppLayout, type Viewer } from "./layout";
import { relative } from "./overview";

export const DECISIONS_PATH = "/app/decisions";
export const decisionHref = (id: string) => `${DECISIONS_PATH}/${encodeURIComponent(id)}`;

type Named = { id: string; display_name: string; external_ref: string };

export interface DecisionsData {
  now: Date;
  q: string;
  semantic: boolean;
  project: string;
  status: string;
  statuses: readonly string[];
  projects: Array<{ id: string; key: string; title: string }>;
  items: Array<Decision & { similarity?: number | null }>;
  mode: string;
  note: string;
  /** The query string of the next (older) page of the listing, when there is one. */
  older?: string;
  /** Titles of decisions a listed one supersedes or is superseded by, where the page knows them. */
  titles: Map<string, string>;
}

const STATUS_CLASS: Record<string, string> = { accepted: "pill good", rejected: "pill bad", proposed: "pill warn" };

export function StatusPill(props: { status: string }) {
  return <span class={STATUS_CLASS[props.status] ?? "pill"}>{props.status}</span>;
}

function StaleMark(props: { stale: Decision["stale"]; now: Date }) {
  if (!props.stale) return null;
  return (
    <span class="pill warn" title={`${props.stale.path} changed in ${props.stale.commit}`}>
      stale since {relative(props.stale.at, props.now)}
    </span>
  );
}

/** A link to another decision, by title when the page has it. */
function DecisionLink(props: { id: string; titles: Map<string, string> }) {
  return <a href={decisionHref(props.id)}>{props.titles.get(props.id) ?? props.id}</a>;
}

export function DecisionsPage(props: { viewer: Viewer; data: DecisionsData }) {
  const { data } = props;
  return (
    <AppLayout title="Decisions" viewer={props.viewer} current={DECISIONS_PATH}>
      <h1>Decisions</h1>
      <FilterForm action={DECISIONS_PATH} label="Find decisions" button="Find">
        <label>
          Words
          <input type="text" name="q" value={data.q} maxlength={500} />
        </label>
        <Choice
          name="project"
          label="Project"
          any="All projects"
          value={data.projects.find((p) => p.key === data.project || p.id === data.project)?.key ?? ""}
          options={data.projects.map((p) => [p.key, `${p.key} · ${p.title}`] as const)}
        />
        <Choice name="status" label="Status" any="Any status" value={data.status} options={plainOptions(data.statuses)} />
        <label class="inline">
          <input type="checkbox" name="semantic" value="1" checked={data.semantic} /> Rank by meaning too
        </label>
      </FilterForm>
      <p class="muted" aria-live="polite">
        {data.items.length} decision(s){data.mode === "list" ? ", newest first" : `, best match first (${data.mode})`}.{data.note ? ` ${data.note}.` : ""}
      </p>
      {data.items.length ? (
        <ul class="plain" id="decision-log">
          {data.items.map((d) => (
            <li>
              <StatusPill status={d.status} /> <a href={decisionHref(d.id)}>{d.title}</a>: {d.choice} <StaleMark stale={d.stale} now={data.now} />
              <br />
              <span class="muted">
                {data.projects.find((p) => p.id === d.project_id)?.key ?? "tenant-wide"} · {relative(d.created_at, data.now)}
                {d.supersedes_decision_id ? (
                  <>
                    {" "}
                    · supersedes <DecisionLink id={d.supersedes_decision_id} titles={data.titles} />
                  </>
                ) : null}
                {d.superseded_by ? (
                  <>
                    {" "}
                    · <strong>superseded by</strong> <DecisionLink id={d.superseded_by} titles={data.titles} />
                  </>
                ) : null}
              </span>
            </li>
          ))}
        </ul>
      ) : (
        <p>No decisions match.</p>
      )}
      <OlderLink path={DECISIONS_PATH} query={data.older} label="Older decisions" />
    </AppLayout>
  );
}

export interface DecisionData {
  now: Date;
  decision: Decision;
  /** The supersede chain, oldest first; the decision itself is one of them. */
  chain: Decision[];
  project?: { key: string; title: string };
  actors: Named[];
}

export function DecisionPage(props: { viewer: Viewer; data: DecisionData }) {
  const { decision: d, now } = props.data;
  const who = (id: string) => {
    const a = props.data.actors.find((x) => x.id === id);
    return a ? a.display_name || a.external_ref : id;
  };
  return (
    <AppLayout title={d.title} viewer={props.viewer} current={DECISIONS_PATH}>
      <p>
        <a href={DECISIONS_PATH}>All decisions</a>
      </p>
      <h1>{d.title}</h1>
      <p>
        <StatusPill status={d.status} /> <StaleMark stale={d.stale} now={now} />
        {d.superseded_by ? <span class="pill bad">superseded</span> : null}
      </p>
      {d.stale ? (
        <p class="card warn" role="note">
          A push changed <code>{d.stale.path}</code> (commit <code>{d.stale.commit.slice(0, 12)}</code>) since this was logged or last confirmed.
        </p>
      ) : null}
      <dl class="facts">
        <dt>Choice</dt>
        <dd>{d.choice}</dd>
        <dt>Project</dt>
        <dd>{props.data.project ? `${props.data.project.key} · ${props.data.project.title}` : "tenant-wide"}</dd>
        <dt>Logged</dt>
        <dd>
          {d.created_at} by {who(d.created_by)}
        </dd>
        <dt>Status since</dt>
        <dd>{d.status_changed_at}</dd>
      </dl>
      <h2>Context</h2>
      <p class="prose">{d.context || "—"}</p>
      <h2>Rationale</h2>
      <p class="prose">{d.rationale || "—"}</p>
      <h2>Options weighed</h2>
      {d.options.length ? (
        <div class="grid">
          {d.options.map((o) => (
            <article class="card">
              <h3>
                {o.label}
                {o.label === d.choice ? (
                  <>
                    {" "}
                    <span class="pill good">chosen</span>
                  </>
                ) : null}
              </h3>
              {o.summary ? <p>{o.summary}</p> : null}
              {o.pros.length ? (
                <>
                  <h4>For</h4>
                  <ul>
                    {o.pros.map((p) => (
                      <li>{p}</li>
                    ))}
                  </ul>
                </>
              ) : null}
              {o.cons.length ? (
                <>
                  <h4>Against</h4>
                  <ul>
                    {o.cons.map((c) => (
                      <li>{c}</li>
                    ))}
                  </ul>
                </>
              ) : null}
            </article>
          ))}
        </div>
      ) : (
        <p class="muted">No options were recorded.</p>
      )}
      {props.data.chain.length > 1 ? (
        <section aria-labelledby="chain">
          <h2 id="chain">Supersede chain</h2>
          <ol id="supersede-chain">
            {props.data.chain.map((c) => (
              <li>
                {c.id === d.id ? <strong aria-current="page">{c.title}</strong> : <a href={decisionHref(c.id)}>{c.title}</a>}: {c.choice} <StatusPill status={c.status} />{" "}
                <span class="muted">{c.created_at}</span>
              </li>
            ))}
          </ol>
        </section>
      ) : null}
    </AppLayout>
  );
}
