/**
 * The overview: projects with their tasks counted by state, the agents at work now and what each
 * holds (claims and path reservations, with the lease time left), the live activity feed, and what
 * waits for the signed-in person. Data comes from the tools; this only draws it.
 */
import { OverseerForm } from "./forms";
import { AppLayout, type Viewer } from "./layout";

type Row = Record<string, unknown>;
export const rows = (v: unknown): Row[] => (Array.isArray(v) ? (v as Row[]) : []);
export const text = (v: unknown): string => (v === null || v === undefined ? "" : String(v));

/** "in 14 min", "3 h ago": a lease or heartbeat as a person reads it. */
export function relative(at: string, now: Date): string {
  const ms = Date.parse(at) - now.getTime();
  if (!Number.isFinite(ms)) return "";
  const abs = Math.abs(ms);
  const amount =
    abs < 60_000 ? `${Math.round(abs / 1000)} s` : abs < 3_600_000 ? `${Math.round(abs / 60_000)} min` : abs < 86_400_000 ? `${Math.round(abs / 3_600_000)} h` : `${Math.round(abs / 86_400_000)} d`;
  return ms >= 0 ? `in ${amount}` : `${amount} ago`;
}

/** Where the live script fetches the feed's items again (src/web/app/live.ts). */
export const LIVE_FEED_PATH = "/app/live/feed";

/** The feed's items: the overview draws them, and the live script swaps in a fresh copy. */
export function ActivityItems(props: { items: Row[]; now: Date }) {
  return (
    <>
      {props.items.map((a) => (
        <li>
          <span class="muted">{relative(text(a.at), props.now)}</span> <strong>{text(a.actor_name)}</strong> {text(a.verb)} <span class={a.severity === "info" ? "" : "warn"}>{text(a.summary)}</span>
        </li>
      ))}
    </>
  );
}

export interface OverviewData {
  now: Date;
  me: Row;
  projects: Row[];
  agents: Array<{ actor: Row; runs: Row[]; claims: Row[]; reservations: Row[]; lastActivity?: Row }>;
  activity: Row[];
}

const LANES = ["todo", "in_progress", "in_review", "done", "cancelled"] as const;

export function OverviewPage(props: { viewer: Viewer; data: OverviewData }) {
  const { data } = props;
  const inbox = (data.me.inbox ?? {}) as Row;
  const notices = (data.me.notifications ?? {}) as Row;
  return (
    <AppLayout title="Overview" viewer={props.viewer} current="/app">
      <h1>Overview</h1>
      <div class="grid">
        <section class="card" aria-labelledby="waiting">
          <h2 id="waiting">Waiting for you</h2>
          <p>
            <strong>{text(inbox.count)}</strong> handoff(s) in your inbox, <strong>{text(notices.unread_count)}</strong> unread notice(s).
          </p>
          <ul class="plain">
            {rows(notices.items).map((n) => (
              <li>
                <span class={n.kind === "overseer" ? "pill bad" : "pill"}>{text(n.kind)}</span> {text(n.summary)} <span class="muted">{relative(text(n.created_at), data.now)}</span>
              </li>
            ))}
          </ul>
        </section>
        <section class="card" aria-labelledby="projects">
          <h2 id="projects">Projects</h2>
          {data.projects.length ? (
            <div class="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Project</th>
                    <th scope="col">to do</th>
                    <th scope="col">blocked</th>
                    {LANES.slice(1, 4).map((l) => (
                      <th scope="col">{l.replace("_", " ")}</th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {data.projects.map((p) => {
                    const counts = (p.task_counts ?? { by_status: {} }) as Row;
                    const by = (counts.by_status ?? {}) as Row;
                    return (
                      <tr>
                        <th scope="row">
                          {text(p.key)} <span class="muted">{text(p.title)}</span>
                        </th>
                        <td>{text(by.todo ?? 0)}</td>
                        <td>{text(counts.blocked ?? 0)}</td>
                        {LANES.slice(1, 4).map((l) => (
                          <td>{text(by[l] ?? 0)}</td>
                        ))}
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          ) : (
            <p class="muted">No projects yet.</p>
          )}
        </section>
      </div>
      <section aria-labelledby="agents">
        <h2 id="agents">Agents at work</h2>
        {data.agents.length ? (
          <div class="grid">
            {data.agents.map((a) => (
              <article class="card">
                <h3>{text(a.actor.display_name || a.actor.name)}</h3>
                <p class="muted">
                  {a.runs.length} running session(s)
                  {a.runs[0] ? `, last heartbeat ${relative(text(a.runs[0].last_heartbeat_at), data.now)}` : ""}
                </p>
                {a.claims.length ? (
                  <ul class="plain" aria-label="Claimed tasks">
                    {a.claims.map((t) => (
                      <li>
                        {text(t.ref)} {text(t.title)} <span class="muted">lease {t.lease_expires_at ? relative(text(t.lease_expires_at), data.now) : "none"}</span>
                      </li>
                    ))}
                  </ul>
                ) : null}
                {a.reservations.length ? (
                  <ul class="plain" aria-label="Reserved paths">
                    {a.reservations.map((r) => (
                      <li>
                        <code>{text(r.pattern)}</code> in {text(r.repository)} {r.exclusive ? <span class="pill warn">exclusive</span> : null}{" "}
                        <span class="muted">until {relative(text(r.expires_at), data.now)}</span>
                      </li>
                    ))}
                  </ul>
                ) : null}
                {a.lastActivity ? (
                  <p class="muted">
                    Last: {text(a.lastActivity.verb)} {text(a.lastActivity.summary)} ({relative(text(a.lastActivity.at), data.now)})
                  </p>
                ) : null}
                <OverseerForm viewer={props.viewer} back="/app" to={{ id: text(a.actor.id), name: text(a.actor.display_name || a.actor.name) }} />
              </article>
            ))}
          </div>
        ) : (
          <p class="muted">No agent holds work or has a running session.</p>
        )}
      </section>
      <section aria-labelledby="feed">
        <h2 id="feed">Activity</h2>
        <ul class="plain" id="activity-feed" data-live={LIVE_FEED_PATH} aria-live="polite">
          <ActivityItems items={data.activity} now={data.now} />
        </ul>
      </section>
    </AppLayout>
  );
}
