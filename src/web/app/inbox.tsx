/**
 * The signed-in person's inbox: the handoffs, reviews and approvals addressed to them, each with
 * its answer form, their notifications with a way to mark them read, and (for operators) an
 * overseer message to any agent. Data comes from the tools; this only draws it.
 */
import { ApprovalAnswerForm, HandoffAckForm, HandoffAnswerForm, HandoffClaimForm, MarkReadForm, OverseerForm } from "./forms";
import { AppLayout, type Viewer } from "./layout";
import { relative } from "./overview";

type Row = Record<string, unknown>;
const text = (v: unknown): string => (v === null || v === undefined ? "" : String(v));
const BODY_SHOWN = 2000;

export const INBOX_PATH = "/app/inbox";

export interface InboxData {
  now: Date;
  /** The viewer's actor id. */
  me: string;
  /** Unacknowledged handoffs addressed to the viewer, oldest first (the inbox tool's). */
  handoffs: Row[];
  total: number;
  /** Pending approval requests, by their handoff's id. */
  approvals: Map<string, Row>;
  notifications: Row[];
  unread: number;
  actors: Row[];
}

function HandoffCard(props: { h: Row; data: InboxData; viewer: Viewer; names: Map<string, string> }) {
  const { h, data, viewer, names } = props;
  const id = text(h.id);
  const several = Array.isArray(h.to_actor_ids) && h.to_actor_ids.length > 1;
  const heldByOther = h.status === "claimed" && h.claimed_by !== null && h.claimed_by !== data.me;
  const request = h.kind === "approval" ? data.approvals.get(id) : undefined;
  const body = text(h.body);
  let action;
  if (h.kind === "approval") {
    action = request ? (
      <ApprovalAnswerForm request={request} viewer={viewer} back={INBOX_PATH} />
    ) : (
      <>
        <p class="muted">This approval request is no longer pending.</p>
        <HandoffAckForm handoffId={id} viewer={viewer} back={INBOX_PATH} />
      </>
    );
  } else if (h.status === "responded") {
    action = (
      <>
        <p class="muted">Answered {h.responded_at ? relative(text(h.responded_at), data.now) : ""}.</p>
        <HandoffAckForm handoffId={id} viewer={viewer} back={INBOX_PATH} />
      </>
    );
  } else if (heldByOther) {
    action = <p class="muted">Claimed by {names.get(text(h.claimed_by)) ?? text(h.claimed_by)}.</p>;
  } else {
    action = (
      <>
        {h.status === "open" && several ? <HandoffClaimForm handoffId={id} viewer={viewer} back={INBOX_PATH} /> : null}
        <HandoffAnswerForm handoff={h} viewer={viewer} back={INBOX_PATH} />
      </>
    );
  }
  return (
    <article class="card" aria-labelledby={`h-${id}`}>
      <h3 id={`h-${id}`}>
        <span class={h.kind === "review" || h.kind === "approval" ? "pill warn" : "pill"}>{text(h.kind)}</span> {text(h.title)}
      </h3>
      <p class="muted">
        From {names.get(text(h.from_actor_id)) ?? text(h.from_actor_id)}, {relative(text(h.created_at), data.now)} · {text(h.status)}
        {h.due_at ? ` · due ${relative(text(h.due_at), data.now)}` : ""}
        {h.related_task_id ? (
          <>
            {" · "}
            <a href={`/app/tasks/${encodeURIComponent(text(h.related_task_id))}`}>the task</a>
          </>
        ) : null}
      </p>
      {body ? <p class="body">{body.length > BODY_SHOWN ? `${body.slice(0, BODY_SHOWN)}…` : body}</p> : null}
      {request ? (
        <p class="muted">
          Plan {text(request.plan_id)}, version {text(request.plan_version)}: {text(request.summary)}
        </p>
      ) : null}
      {action}
    </article>
  );
}

export function InboxPage(props: { viewer: Viewer; data: InboxData }) {
  const { data, viewer } = props;
  const names = new Map(data.actors.map((a) => [text(a.id), text(a.display_name || a.external_ref || a.id)]));
  const unreadShown = data.notifications.filter((n) => !n.read_at).map((n) => text(n.id));
  const agents = data.actors.filter((a) => a.kind === "agent");
  return (
    <AppLayout title="Inbox" viewer={viewer} current={INBOX_PATH}>
      <h1>Inbox</h1>
      <section aria-labelledby="requests">
        <h2 id="requests">Handoffs, reviews and approvals ({data.total})</h2>
        {data.handoffs.length ? (
          <div class="grid">
            {data.handoffs.map((h) => (
              <HandoffCard h={h} data={data} viewer={viewer} names={names} />
            ))}
          </div>
        ) : (
          <p class="muted">Nothing is waiting for you.</p>
        )}
      </section>
      <section aria-labelledby="notices">
        <h2 id="notices">Notifications ({data.unread} unread)</h2>
        <MarkReadForm ids={unreadShown} viewer={viewer} back={INBOX_PATH} label="Mark all shown read" />
        {data.notifications.length ? (
          <ul class="plain">
            {data.notifications.map((n) => (
              <li>
                <span class={n.kind === "overseer" ? "pill bad" : "pill"}>{text(n.kind)}</span> {n.read_at ? null : <strong>unread </strong>}
                {text(n.summary)}{" "}
                <span class="muted">
                  from {names.get(text(n.from_actor_id)) ?? text(n.from_actor_id)}, {relative(text(n.created_at), data.now)}
                </span>{" "}
                {n.read_at ? null : <MarkReadForm ids={[text(n.id)]} viewer={viewer} back={INBOX_PATH} label="Mark read" />}
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">No notifications.</p>
        )}
      </section>
      {viewer.operator && viewer.access === "full" && agents.length ? (
        <section aria-labelledby="overseer" class="card">
          <h2 id="overseer">Interrupt an agent</h2>
          <p class="muted">The message goes to the top of the agent's inbox, before anything else, until it reads it.</p>
          <OverseerForm viewer={viewer} back={INBOX_PATH} agents={agents} />
        </section>
      ) : null}
    </AppLayout>
  );
}
