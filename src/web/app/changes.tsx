/**
 * The change ledger: a timeline per path or dotted prefix with its blame and, before anything else,
 * the earlier attempts that were undone (so nobody re-applies a reverted change unaware); recent
 * history across everything; changesets; and whether the tenant's hash chain verifies.
 */
import type { ChangeEvent } from "../../changes/events";
import { FilterForm, OlderLink } from "./fields";
import { AppLayout, type Viewer } from "./layout";
import { relative } from "./overview";

export const CHANGES_PATH = "/app/changes";
export const changesetHref = (slug: string) => `${CHANGES_PATH}/changesets/${encodeURIComponent(slug)}`;
const pathHref = (path: string) => `${CHANGES_PATH}?path=${encodeURIComponent(path)}`;

export type Attempt = ChangeEvent & { outcome: string; confidence: string; outcome_reasoning: string; supersede_reasoning: string; current_status: string };
// `error` is not here: the dashboard's read() keeps it for the error envelope, so a miss is status no_history.
export type Blame = ChangeEvent & { status: string };

export interface ChainCheck {
  intact: boolean;
  checked: number;
  unchained_legacy: number;
  first_break: { message: string } | null;
  next_cursor?: string;
}

export interface ChangesData {
  now: Date;
  path: string;
  since: string;
  /** With a path: its timeline, its blame and its prior attempts; without: recent history. */
  timeline?: { items: ChangeEvent[]; older?: string };
  blame?: Blame;
  attempts?: { items: Attempt[]; note: string };
  history?: { items: ChangeEvent[]; older?: string };
  verify: ChainCheck;
}

const UNDOING = new Set(["remove", "revert", "reject", "delete"]);

function ChainStatus(props: { verify: ChainCheck }) {
  const v = props.verify;
  return (
    <section class="card" aria-labelledby="chain-status" id="chain">
      <h2 id="chain-status">Hash chain</h2>
      {v.intact ? (
        <p class="good">
          Verifies: {v.checked} link(s) intact{v.next_cursor ? " (the newest were not all checked on this page; change_verify continues)" : ""}.
        </p>
      ) : (
        <p class="bad" role="alert">
          Broken: {v.first_break?.message ?? "a link does not verify"}.
        </p>
      )}
      {v.unchained_legacy ? <p class="muted">{v.unchained_legacy} older row(s) are not chained yet; the nightly sweep chains them.</p> : null}
    </section>
  );
}

export function EventList(props: { items: ChangeEvent[]; now: Date; showPath?: boolean }) {
  return (
    <ol class="plain timeline">
      {props.items.map((e) => (
        <li>
          <span class={UNDOING.has(e.change_type) ? "pill bad" : "pill"}>{e.change_type}</span>{" "}
          {props.showPath ? (
            <a href={pathHref(e.entity_path)}>
              <code>{e.entity_path}</code>
            </a>
          ) : (
            <code>{e.entity_path}</code>
          )}{" "}
          by <strong>{e.agent || e.actor || "unknown"}</strong>{" "}
          <time datetime={e.timestamp} class="muted">
            {relative(e.timestamp, props.now)}
          </time>
          {e.superseded_by ? <span class="pill warn">re-opened</span> : null}
          {e.reasoning ? <p class="prose">{e.reasoning}</p> : <p class="muted">No reasoning recorded.</p>}
          <p class="muted">
            {e.git_commit ? (
              <>
                commit <code>{e.git_commit.slice(0, 12)}</code>{" "}
              </>
            ) : null}
            {e.changeset_id ? (
              <>
                changeset <a href={changesetHref(e.changeset_id)}>{e.changeset_id}</a>{" "}
              </>
            ) : null}
            {e.constraint ? <>must keep: {e.constraint}</> : null}
          </p>
          {e.diff ? (
            <details>
              <summary>Diff</summary>
              <pre class="scroll">{e.diff}</pre>
            </details>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

function Attempts(props: { attempts: { items: Attempt[]; note: string }; now: Date }) {
  const { items, note } = props.attempts;
  return (
    <section class={items.length ? "card error" : "card"} aria-labelledby="prior" id="prior-attempts">
      <h2 id="prior">Tried before</h2>
      {items.length ? (
        <>
          <p role="note">
            <strong>{items.length} earlier attempt(s) here did not last. Read why before re-applying a change.</strong>
          </p>
          <ul class="plain">
            {items.map((a) => (
              <li>
                <span class={a.outcome === "active" ? "pill" : "pill bad"}>{a.outcome}</span> <span class="pill">{a.change_type}</span> <code>{a.entity_path}</code> by{" "}
                <strong>{a.agent || a.actor || "unknown"}</strong> <span class="muted">{relative(a.timestamp, props.now)}</span>
                {a.reasoning ? <p class="prose">Tried because: {a.reasoning}</p> : null}
                {a.outcome_reasoning ? <p class="prose">Undone because: {a.outcome_reasoning}</p> : null}
                {a.supersede_reasoning ? <p class="prose">Re-opened because: {a.supersede_reasoning}</p> : null}
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p class="muted">No earlier attempt here was reverted or rejected.</p>
      )}
      {note ? <p class="muted">{note}</p> : null}
    </section>
  );
}

export function ChangesPage(props: { viewer: Viewer; data: ChangesData }) {
  const { data } = props;
  return (
    <AppLayout title={data.path ? `Changes: ${data.path}` : "Changes"} viewer={props.viewer} current={CHANGES_PATH}>
      <h1>{data.path ? `Changes to ${data.path}` : "Changes"}</h1>
      <FilterForm action={CHANGES_PATH} label="Changes on a path" button="Show">
        <label>
          Path or dotted prefix
          <input type="text" name="path" value={data.path} maxlength={1024} placeholder="users.email, src/auth.ts::login, deps/" />
        </label>
        {data.path ? null : (
          <label>
            Since
            <input type="text" name="since" value={data.since} maxlength={64} />
          </label>
        )}
      </FilterForm>
      {data.attempts ? <Attempts attempts={data.attempts} now={data.now} /> : null}
      {data.blame ? (
        <section aria-labelledby="blame-h" id="blame">
          <h2 id="blame-h">Blame</h2>
          {data.blame.status === "no_history" ? (
            <p class="muted">No history found for exactly {data.path} (blame reads an exact path, not a prefix).</p>
          ) : (
            <p>
              <span class={data.blame.status === "active" ? "pill good" : "pill bad"}>{data.blame.status}</span> last {data.blame.change_type} by{" "}
              <strong>{data.blame.agent || data.blame.actor || "unknown"}</strong> <span class="muted">{relative(data.blame.timestamp, data.now)}</span>
              {data.blame.reasoning ? `: ${data.blame.reasoning}` : ""}
            </p>
          )}
        </section>
      ) : null}
      {data.timeline ? (
        <section aria-labelledby="timeline-h" id="timeline">
          <h2 id="timeline-h">Timeline, newest first</h2>
          {data.timeline.items.length ? <EventList items={data.timeline.items} now={data.now} showPath={true} /> : <p>Nothing was logged on this path.</p>}
          <OlderLink path={CHANGES_PATH} query={data.timeline.older} label="Older changes" bare />
        </section>
      ) : null}
      {data.history ? (
        <section aria-labelledby="history-h" id="history">
          <h2 id="history-h">Recent history since {data.since}</h2>
          {data.history.items.length ? <EventList items={data.history.items} now={data.now} showPath={true} /> : <p>Nothing was logged in this window.</p>}
          <OlderLink path={CHANGES_PATH} query={data.history.older} label="Older changes" bare />
          <Changesets items={data.history.items} />
        </section>
      ) : null}
      <ChainStatus verify={data.verify} />
    </AppLayout>
  );
}

function Changesets(props: { items: ChangeEvent[] }) {
  const slugs = [...new Set(props.items.map((e) => e.changeset_id).filter(Boolean))];
  if (!slugs.length) return null;
  return (
    <>
      <h3>Changesets in this window</h3>
      <ul id="changesets">
        {slugs.map((s) => (
          <li>
            <a href={changesetHref(s)}>{s}</a>
          </li>
        ))}
      </ul>
    </>
  );
}

export function ChangesetPage(props: { viewer: Viewer; slug: string; items: ChangeEvent[]; more: boolean; now: Date }) {
  return (
    <AppLayout title={`Changeset ${props.slug}`} viewer={props.viewer} current={CHANGES_PATH}>
      <p>
        <a href={CHANGES_PATH}>All changes</a>
      </p>
      <h1>Changeset {props.slug}</h1>
      <p class="muted">
        {props.items.length} change(s), oldest first{props.more ? "; only the first 1000 are shown" : ""}.
      </p>
      <EventList items={props.items} now={props.now} showPath={true} />
    </AppLayout>
  );
}
