/**
 * The dashboard's action forms: plain POST forms (CSRF field, a `back` path to return to) that
 * any page drops in, e.g. `<TaskActions task={t} viewer={viewer} back={here} />` on the task page.
 * Each posts to a route of src/http/dashboard-actions.ts, which runs the tool and redirects back
 * with the outcome. A read-only viewer is given none of them.
 */
import type { Child } from "hono/jsx";
import { CSRF_FIELD } from "../security";
import type { Viewer } from "./layout";

type Row = Record<string, unknown>;
const text = (v: unknown): string => (v === null || v === undefined ? "" : String(v));
const path = (...parts: string[]) => `/app/${parts.map(encodeURIComponent).join("/")}`;

/** What a form did, shown once on the page it returned to. */

/** Whether this viewer may be shown forms that change data. */
export const canWrite = (viewer: Viewer) => viewer.access === "full";

/** A POST form with the CSRF field and where to come back to. */
function ActionForm(props: { action: string; viewer: Viewer; back: string; label?: string; class?: string; children: Child }) {
  return (
    <form method="post" action={props.action} class={props.class ?? "action"} aria-label={props.label}>
      <input type="hidden" name={CSRF_FIELD} value={props.viewer.csrf} />
      <input type="hidden" name="back" value={props.back} />
      {props.children}
    </form>
  );
}

/** Operators may override another's live lease; the reason is kept on the task's timeline. */
function ForceFields(props: { viewer: Viewer }) {
  if (!props.viewer.operator) return null;
  return (
    <>
      <label>
        <input type="checkbox" name="force" value="1" /> Override the holder's live lease (operator)
      </label>
      <label>
        Reason for overriding
        <input type="text" name="reason" maxlength={500} />
      </label>
    </>
  );
}

export function CommentForm(props: { taskId: string; viewer: Viewer; back: string }) {
  if (!canWrite(props.viewer)) return null;
  return (
    <ActionForm action={path("tasks", props.taskId, "comment")} viewer={props.viewer} back={props.back} label="Comment">
      <label>
        Comment (@name tells that actor)
        <textarea name="body" rows={3} required maxlength={20000}></textarea>
      </label>
      <button type="submit">Comment</button>
    </ActionForm>
  );
}

export function AssignForm(props: { taskId: string; viewer: Viewer; back: string; assignee?: string }) {
  if (!canWrite(props.viewer)) return null;
  return (
    <ActionForm action={path("tasks", props.taskId, "assign")} viewer={props.viewer} back={props.back} label="Reassign">
      <label>
        Assign to (actor name or id; empty for nobody)
        <input type="text" name="assignee" maxlength={200} value={props.assignee ?? ""} />
      </label>
      <ForceFields viewer={props.viewer} />
      <button type="submit">Reassign</button>
    </ActionForm>
  );
}

export function ReleaseForm(props: { taskId: string; viewer: Viewer; back: string }) {
  if (!canWrite(props.viewer)) return null;
  return (
    <ActionForm action={path("tasks", props.taskId, "release")} viewer={props.viewer} back={props.back} label="Release">
      <label>
        Why release it (optional)
        <input type="text" name="note" maxlength={2000} />
      </label>
      <ForceFields viewer={props.viewer} />
      <button type="submit">Release to the pool</button>
    </ActionForm>
  );
}

/** The task page's actions in one block: comment, reassign, release. */
export function TaskActions(props: { task: Row; viewer: Viewer; back: string }) {
  if (!canWrite(props.viewer)) return null;
  const id = text(props.task.ref || props.task.id);
  return (
    <section class="card" aria-labelledby="task-actions">
      <h2 id="task-actions">Act on {id}</h2>
      <CommentForm taskId={id} viewer={props.viewer} back={props.back} />
      <AssignForm taskId={id} viewer={props.viewer} back={props.back} assignee={text(props.task.assignee_actor_id)} />
      <ReleaseForm taskId={id} viewer={props.viewer} back={props.back} />
    </section>
  );
}

/** An overseer message: to one agent (`to`), or to one picked from `agents`. Operators only. */
export function OverseerForm(props: { viewer: Viewer; back: string; to?: { id: string; name: string }; agents?: Row[] }) {
  if (!canWrite(props.viewer) || !props.viewer.operator) return null;
  return (
    <ActionForm action="/app/overseer" viewer={props.viewer} back={props.back} label={props.to ? `Interrupt ${props.to.name}` : "Interrupt an agent"}>
      {props.to ? (
        <input type="hidden" name="to" value={props.to.id} />
      ) : (
        <label>
          Agent
          <select name="to" required>
            {(props.agents ?? []).map((a) => (
              <option value={text(a.id)}>{text(a.display_name || a.external_ref || a.id)}</option>
            ))}
          </select>
        </label>
      )}
      <label>
        Overseer message{props.to ? ` to ${props.to.name}` : ""} (read first)
        <input type="text" name="message" required maxlength={500} />
      </label>
      <button type="submit">Interrupt</button>
    </ActionForm>
  );
}

const VERDICT_LABELS: Array<[string, string]> = [
  ["approved", "Approve (unlocks done)"],
  ["changes_requested", "Request changes"],
  ["rejected", "Reject"],
];

/** The answer to a handoff addressed to the viewer: a review's verdict, an option, or free text. */
export function HandoffAnswerForm(props: { handoff: Row; viewer: Viewer; back: string }) {
  const h = props.handoff;
  if (!canWrite(props.viewer)) return null;
  const id = text(h.id);
  const options = Array.isArray(h.options) ? (h.options as Row[]) : [];
  return (
    <ActionForm action={path("handoffs", id, "respond")} viewer={props.viewer} back={props.back} label={`Answer ${text(h.title)}`}>
      {h.kind === "review" ? (
        <fieldset>
          <legend>Verdict</legend>
          {VERDICT_LABELS.map(([value, label]) => (
            <label>
              <input type="radio" name="verdict" value={value} required /> {label}
            </label>
          ))}
        </fieldset>
      ) : options.length ? (
        <fieldset>
          <legend>Choose</legend>
          {options.map((o) => (
            <label>
              <input type="radio" name="option" value={text(o.label)} required={!h.allow_free_text} /> {text(o.label)} {o.summary ? <span class="muted">{text(o.summary)}</span> : null}
            </label>
          ))}
        </fieldset>
      ) : null}
      {h.allow_free_text || h.kind === "review" ? (
        <label>
          {h.kind === "review" ? "Why (optional)" : "Answer"}
          <textarea name="text" rows={2} maxlength={20000}></textarea>
        </label>
      ) : null}
      <button type="submit" class="primary">
        {h.kind === "review" ? "Send verdict" : "Answer"}
      </button>
    </ActionForm>
  );
}

/** Claim a handoff several people were asked, so the others know it is taken. */
export function HandoffClaimForm(props: { handoffId: string; viewer: Viewer; back: string }) {
  if (!canWrite(props.viewer)) return null;
  return (
    <ActionForm action={path("handoffs", props.handoffId, "claim")} viewer={props.viewer} back={props.back} class="action inline">
      <button type="submit">Claim</button>
    </ActionForm>
  );
}

/** Take an answered handoff out of the inbox. */
export function HandoffAckForm(props: { handoffId: string; viewer: Viewer; back: string }) {
  if (!canWrite(props.viewer)) return null;
  return (
    <ActionForm action={path("handoffs", props.handoffId, "ack")} viewer={props.viewer} back={props.back} class="action inline">
      <button type="submit">Done with it</button>
    </ActionForm>
  );
}

const APPROVAL_LABELS: Array<[string, string]> = [
  ["approve", "Approve"],
  ["reject", "Reject"],
  ["request_modification", "Request modifications"],
];

/** The answer to a plan's approval request (respond_approval). */
export function ApprovalAnswerForm(props: { request: Row; viewer: Viewer; back: string }) {
  if (!canWrite(props.viewer)) return null;
  return (
    <ActionForm action={path("approvals", text(props.request.id), "respond")} viewer={props.viewer} back={props.back} label={`Answer approval of ${text(props.request.summary)}`}>
      <fieldset>
        <legend>Answer</legend>
        {APPROVAL_LABELS.map(([value, label]) => (
          <label>
            <input type="radio" name="action" value={value} required /> {label}
          </label>
        ))}
      </fieldset>
      <label>
        Comment (optional)
        <textarea name="comment" rows={2} maxlength={5000}></textarea>
      </label>
      <label>
        Modifications (with "Request modifications")
        <textarea name="modifications" rows={2} maxlength={10000}></textarea>
      </label>
      <button type="submit" class="primary">
        Answer
      </button>
    </ActionForm>
  );
}

/** Mark notifications read: one, or every one listed (`label` says which). */
export function MarkReadForm(props: { ids: string[]; viewer: Viewer; back: string; label: string }) {
  if (!canWrite(props.viewer) || props.ids.length === 0) return null;
  return (
    <ActionForm action="/app/notifications/read" viewer={props.viewer} back={props.back} class="action inline">
      {props.ids.map((id) => (
        <input type="hidden" name="id" value={id} />
      ))}
      <button type="submit">{props.label}</button>
    </ActionForm>
  );
}
