/**
 * Plans: the saved plans with their progress and the approval requests waiting, and one plan with
 * its steps (state, who, when, the task that tracks each, the commit execute_plan made), its
 * milestones, its approval requests (answerable here) and the three diagrams visualize_plan draws,
 * rendered on the server. Data comes from the tools; this only draws it.
 */
import type { Approval } from "../../plans/approvals/model";
import type { Progress, StepState } from "../../plans/progress/engine";
import type { PlanMeta } from "../../plans/store/model";
import { taskHref, statusWord } from "./board";
import { Choice, FilterForm, HeadRow, OlderLink, plainOptions } from "./fields";
import { ApprovalAnswerForm } from "./forms";
import { AppLayout, type Viewer } from "./layout";
import { MermaidFigure } from "./mermaid";
import { relative } from "./overview";

export const PLANS_PATH = "/app/plans";
export const planHref = (id: string) => `${PLANS_PATH}/${encodeURIComponent(id)}`;

const STEP_CLASS: Record<string, string> = { completed: "pill good", skipped: "pill", in_progress: "pill warn", ready: "pill", failed: "pill bad", blocked: "pill bad", pending: "pill" };
const STEP_WORDS: Record<string, string> = { in_progress: "in progress" };
const PLAN_CLASS: Record<string, string> = { approved: "pill good", completed: "pill good", executing: "pill warn", failed: "pill bad", needs_clarification: "pill warn" };
const words = (s: string) => s.replaceAll("_", " ");

export function PlanStatus(props: { status: string }) {
  return <span class={PLAN_CLASS[props.status] ?? "pill"}>{words(props.status)}</span>;
}

/** Completed and skipped steps of all, as a bar a screen reader reads as a percentage. */
export function ProgressBar(props: { progress: Progress; label: string }) {
  const p = props.progress;
  return (
    <div class="progress-line">
      <progress max={100} value={p.percentage} aria-label={props.label} />{" "}
      <span>
        {p.percentage}% · {p.completed_steps + p.skipped_steps}/{p.total_steps} done
        {p.in_progress_steps ? `, ${p.in_progress_steps} in progress` : ""}
        {p.ready_steps ? `, ${p.ready_steps} ready` : ""}
        {p.failed_steps ? `, ${p.failed_steps} failed` : ""}
        {p.blocked_steps ? `, ${p.blocked_steps} blocked` : ""}
      </span>
    </div>
  );
}

/** An approval request in a line: what, which steps, asked by whom, due when. */
function ApprovalLine(props: { request: Approval; now: Date; who: (id: string) => string; showPlan?: boolean }) {
  const a = props.request;
  return (
    <>
      {props.showPlan ? (
        <>
          <a href={planHref(a.plan_id)}>{a.plan_id}</a> v{a.plan_version}:{" "}
        </>
      ) : (
        `v${a.plan_version}: `
      )}
      {a.summary} <span class="muted">({a.step_numbers.length ? `step${a.step_numbers.length > 1 ? "s" : ""} ${a.step_numbers.join(", ")}` : "the whole plan"})</span>
      <br />
      <span class="muted">
        asked by {props.who(a.requested_by)} {relative(a.created_at, props.now)}
        {a.due_at ? ` · due ${relative(a.due_at, props.now)}` : ""} · approvers: {a.approver_actor_ids.map(props.who).join(", ")}
      </span>
      {a.note ? <p>{a.note}</p> : null}
    </>
  );
}

export interface PlansData {
  now: Date;
  status: string;
  statuses: readonly string[];
  plans: PlanMeta[];
  /** view_progress of the plans on this page, by id. */
  progress: Map<string, Progress>;
  /** Pending approval requests, newest first. */
  waiting: Approval[];
  me: string;
  who: (id: string) => string;
  older?: string;
}

export function PlansPage(props: { viewer: Viewer; data: PlansData }) {
  const { data } = props;
  const mine = data.waiting.filter((a) => a.approver_actor_ids.includes(data.me));
  return (
    <AppLayout title="Plans" viewer={props.viewer} current={PLANS_PATH}>
      <h1>Plans</h1>
      <section class="card" aria-labelledby="waiting">
        <h2 id="waiting">Approvals waiting ({data.waiting.length})</h2>
        {data.waiting.length ? (
          <ul class="plain">
            {data.waiting.map((a) => (
              <li>
                <ApprovalLine request={a} now={data.now} who={data.who} showPlan />
                {mine.includes(a) ? <ApprovalAnswerForm request={a} viewer={props.viewer} back={PLANS_PATH} /> : null}
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">No approval request is waiting.</p>
        )}
      </section>
      <FilterForm action={PLANS_PATH} label="Filter plans" button="Show">
        <Choice name="status" label="Status" any="Any status" value={data.status} options={plainOptions(data.statuses)} />
      </FilterForm>
      {data.plans.length ? (
        <table>
          <caption class="muted">{data.plans.length} plan(s), most recently changed first</caption>
          <HeadRow cols={["Plan", "Status", "Progress", "Changed"]} />
          <tbody>
            {data.plans.map((p) => {
              const progress = data.progress.get(p.id);
              return (
                <tr>
                  <td>
                    <a href={planHref(p.id)}>{p.name}</a> <code>{p.id}</code> <span class="muted">v{p.version}</span>
                    <br />
                    <span class="muted">{p.goal}</span>
                  </td>
                  <td>
                    <PlanStatus status={p.status} />
                  </td>
                  <td>{progress ? <ProgressBar progress={progress} label={`Progress of ${p.name}`} /> : `${p.step_count} step(s)`}</td>
                  <td>
                    {relative(p.updated_at, data.now)} <span class="muted">by {data.who(p.updated_by)}</span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : (
        <p>No plans match.</p>
      )}
      <OlderLink path={PLANS_PATH} query={data.older} label="Older plans" />
    </AppLayout>
  );
}

export interface Milestone {
  name: string;
  steps_included: number[];
}

export interface Diagram {
  kind: string;
  label: string;
  mermaid: string;
  notes: string[];
}

export interface PlanData {
  now: Date;
  meta: PlanMeta;
  goal: string;
  milestones: Milestone[];
  implied: string;
  progress: Progress;
  steps: StepState[];
  /** The steps' effort estimates, by number (the plan's, not the tracking's). */
  effort: Map<number, string>;
  approvals: Approval[];
  diagrams: Diagram[];
  me: string;
  who: (id: string) => string;
}

function StepRow(props: { step: StepState; effort?: string; now: Date; who: (id: string) => string }) {
  const s = props.step;
  return (
    <tr>
      <th scope="row">{s.step_number}</th>
      <td>
        {s.title}
        {props.effort ? <span class="muted"> · {props.effort}</span> : null}
        {s.error ? <p class="bad">{s.error}</p> : null}
        {s.notes ? <p class="muted">{s.notes}</p> : null}
      </td>
      <td>
        <span class={STEP_CLASS[s.status] ?? "pill"}>{STEP_WORDS[s.status] ?? s.status}</span>
        {s.retries ? (
          <span class="muted">
            {" "}
            · {s.retries} retr{s.retries === 1 ? "y" : "ies"}
          </span>
        ) : null}
      </td>
      <td>{s.depends_on.length ? s.depends_on.join(", ") : <span class="muted">none</span>}</td>
      <td>
        {s.finished_at && s.finished_by ? (
          <span>
            {props.who(s.finished_by)} · {relative(s.finished_at, props.now)}
          </span>
        ) : s.started_at && s.started_by ? (
          <span>
            started by {props.who(s.started_by)} · {relative(s.started_at, props.now)}
          </span>
        ) : (
          <span class="muted">not started</span>
        )}
      </td>
      <td>
        {s.task ? (
          <>
            <a href={taskHref(s.task)}>{s.task.ref}</a> <span class="pill">{statusWord(s.task.status)}</span>
          </>
        ) : null}
        {s.commit ? (
          <>
            {s.task ? <br /> : null}
            <a href={`https://github.com/${s.commit.repo}/commit/${encodeURIComponent(s.commit.sha)}`}>
              {s.commit.repo}@{s.commit.sha.slice(0, 7)}
            </a>
          </>
        ) : null}
        {!s.task && !s.commit ? <span class="muted">none</span> : null}
      </td>
    </tr>
  );
}

export function PlanPage(props: { viewer: Viewer; data: PlanData }) {
  const { data } = props;
  const m = data.meta;
  const back = planHref(m.id);
  const pending = data.approvals.filter((a) => a.status === "pending");
  const answered = data.approvals.filter((a) => a.status !== "pending");
  return (
    <AppLayout title={m.name} viewer={props.viewer} current={PLANS_PATH}>
      <p>
        <a href={PLANS_PATH}>Plans</a>
      </p>
      <h1>{m.name}</h1>
      <p>
        <PlanStatus status={m.status} />
        {data.implied !== m.status ? (
          <span class="muted">
            {" "}
            · its steps say <PlanStatus status={data.implied} />
          </span>
        ) : null}{" "}
        <code>{m.id}</code>{" "}
        <span class="muted">
          v{m.version} · changed {relative(m.updated_at, data.now)} by {data.who(m.updated_by)}
          {m.tags.length ? ` · ${m.tags.join(", ")}` : ""}
        </span>
      </p>
      <p>{data.goal}</p>
      <ProgressBar progress={data.progress} label={`Progress of ${m.name}`} />
      <div class="stack">
        <section class="card" aria-labelledby="approvals">
          <h2 id="approvals">Approvals ({pending.length} waiting)</h2>
          {data.approvals.length === 0 ? <p class="muted">No approval was asked for this plan.</p> : null}
          <ul class="plain">
            {pending.map((a) => (
              <li>
                <span class="pill warn">pending</span> <ApprovalLine request={a} now={data.now} who={data.who} />
                {a.approver_actor_ids.includes(data.me) ? <ApprovalAnswerForm request={a} viewer={props.viewer} back={back} /> : null}
              </li>
            ))}
            {answered.map((a) => (
              <li>
                <span class={a.status === "approved" ? "pill good" : "pill bad"}>{words(a.status)}</span> <ApprovalLine request={a} now={data.now} who={data.who} />
                <span class="muted">
                  {a.responded_by ? `${data.who(a.responded_by)} ` : ""}
                  {a.responded_at ? relative(a.responded_at, data.now) : ""}
                  {a.comment ? `: ${a.comment}` : ""}
                </span>
                {a.modifications ? <p>Modifications asked: {a.modifications}</p> : null}
              </li>
            ))}
          </ul>
        </section>
        <section class="card" aria-labelledby="steps">
          <h2 id="steps">Steps</h2>
          <div class="scroll">
            <table>
              <HeadRow cols={["#", "Step", "State", "After", "Who", "Task, commit"]} />
              <tbody>
                {data.steps.map((s) => (
                  <StepRow step={s} effort={data.effort.get(s.step_number)} now={data.now} who={data.who} />
                ))}
              </tbody>
            </table>
          </div>
          {data.milestones.length ? (
            <>
              <h3>Milestones</h3>
              <ul class="plain">
                {data.milestones.map((ms) => {
                  const inIt = data.steps.filter((s) => ms.steps_included.includes(s.step_number));
                  const done = inIt.filter((s) => s.status === "completed" || s.status === "skipped").length;
                  return (
                    <li>
                      {ms.name}{" "}
                      <span class="muted">
                        {done}/{inIt.length} steps done (steps {ms.steps_included.join(", ")})
                      </span>
                    </li>
                  );
                })}
              </ul>
            </>
          ) : null}
        </section>
        {data.diagrams.map((d) => (
          <section class="card" aria-labelledby={`diagram-${d.kind}`}>
            <h2 id={`diagram-${d.kind}`}>{d.label}</h2>
            <MermaidFigure mermaid={d.mermaid} label={`${d.label} of ${m.name}`} />
            {d.notes.length ? (
              <ul class="muted">
                {d.notes.map((n) => (
                  <li>{n}</li>
                ))}
              </ul>
            ) : null}
          </section>
        ))}
      </div>
    </AppLayout>
  );
}
