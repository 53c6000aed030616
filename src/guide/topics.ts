/**
 * The agent manual: the same text serves the `guide` tool and the `ledger://guide` resources.
 * Pure data, so reading it costs no database round trip.
 */
import { DERIVED_WINDOW_MS } from "../core/idempotency";

export interface GuideTopic {
  id: string;
  title: string;
  body: string;
}

export const GUIDE_TOPICS: readonly GuideTopic[] = [
  {
    id: "getting-started",
    title: "Getting started",
    body: `Call whoami first in every run: it says who you are (from your API key), your open tasks, your inbox and what changed since you were last seen.
Then orient with project_brief on the project you work in, claim work with task_claim, and record what you change with log_change.`,
  },
  {
    id: "entities",
    title: "Entities",
    body: `Projects hold tasks; tasks form a dependency graph. Decisions are an append-only log. Handoffs are typed requests between actors.
Comments, attachments and code refs hang off projects, tasks and decisions. The change ledger records every change to an entity path (users.email, src/auth.py::login).`,
  },
  {
    id: "the-loop",
    title: "The loop",
    body: `whoami → task_claim (or task_get on your open task) → prior_attempts before editing → do the work → log_change for each change →
task_code_ref for the commit or PR → task_update to in_review or done → inbox, acking what you acted on.
The walkthrough topic follows one task through these steps with the calls' arguments, from the claim to the reviewer's verdict.`,
  },
  {
    id: "walkthrough",
    title: "One task end to end: claim, log, hand off, review",
    body: `1. Orient. whoami {} (who you are, your open tasks, your inbox), then project_brief { project: "WEB" }. task_query { project_id: "WEB", state: "ready" } lists open tasks whose dependencies are done.
2. Claim. task_claim { task_id: "WEB-12" } leases the task to you and moves it to in_progress; keep the fencing_token it returns. Without task_id it takes the next ready task (project_id narrows it).
The lease runs out after lease_seconds and the task goes back to the pool: claim again to extend it. claimed: false carries the reason (held: someone else has it; blocked; closed): pick another task.
3. Before editing. prior_attempts { entity_path: "src/auth.ts::login" } says whether the same change was tried before and reverted, and why. Read it, and search for notes (knowledge_search) before redoing research.
4. Log each change. log_change { entity_path: "src/auth.ts::login", change_type: "modify", reasoning: "lock the account after 5 failures", git_commit: "<sha>" } records what changed and why.
Related changes share a changeset_id. A decision worth keeping (a library chosen, an approach dropped) goes to decision_log.
5. Record the delivery. task_code_ref { task_id: "WEB-12", ref_type: "pr", pr_url: "https://github.com/acme/web/pull/7" } (or a commit or branch): the evidence a task that requires_evidence needs before done. It is in the repos toolset: connect with /mcp?toolsets=default,repos to have it.
6. Ask for review. task_update { task_id: "WEB-12", patch: { status: "in_review", reviewer_actor_id: "<reviewer>" }, fencing_token } opens the review handoff to the reviewer: the answer's review_handoff names it.
It also says lease: "released" (no one else can claim a task in review; your fencing_token stays good while it is yours). Do not send a second review: handoff_create { kind: "review", ... } for it is refused (review_already_open).
Find the reviewer's id with actor_query { q: "alice" }. The reviewer must be someone other than you and the task's assignee.
To hand the work itself to someone else instead, handoff_create { kind: "handoff", ... } with what is done and what is left, then task_release { task_id, fencing_token, note }.
7. Review (the reviewer's side). inbox shows the review; handoff_claim { handoff_id } takes it (one recipient wins), log_change and comment_add as needed, then
handoff_respond { handoff_id, response: { verdict: "approved" } } (or changes_requested or rejected, with text). The verdict resolves the review; changes_requested and rejected send the task back to in_progress (your fencing_token moves it to in_review again).
8. Finish. Once approved, task_update { task_id: "WEB-12", patch: { status: "done" }, fencing_token } with the token from step 2: done is refused while a criterion is open, evidence is missing or the latest review is not approved (the error's hint names which).
Then inbox { ack: ["<handoff_id>"] } for what you acted on, and whoami {} again for the next task.`,
  },
  {
    id: "tasks-and-deps",
    title: "Tasks and dependencies",
    body: `Statuses: todo, in_progress, in_review, done, cancelled. todo moves to any other; in_progress and in_review move between themselves and to done or cancelled; done and cancelled reopen only with allow_reopen.
expected_status on task_update is an optimistic precondition (conflict when the status moved). task_query with state: ready lists open tasks whose dependencies are all done.
task_link adds and removes edges, refusing cycles (cycle_rejected). Done is gated by acceptance criteria (mark one met with task_update patch criteria_updates: [{index, met: true}]), evidence (requires_evidence) and the reviewer's approval
(verdict approved on the latest review, from someone other than whoever asked and the assignee).
task_claim leases a task and returns a fencing_token. While your lease is live only you change the task (others get lease_held); pass the token on
task_update, task_assign and task_release so a write from a lease that ran out or was taken over is refused (stale_fencing_token: re-claim, re-read, retry).
Moving out of in_progress (to in_review) releases the lease and says lease: "released"; the token stays good while the task is assigned to you and nobody claims it, so it also finishes the task.
An operator key may write over another's lease with force: true and a reason; the holder is notified. A lease that runs out sends the task back to the pool.`,
  },
  {
    id: "decisions",
    title: "Decisions",
    body: `decision_log appends a decision (title, choice, rationale, options with pros and cons). To change one, log a new decision with supersedes_decision_id;
decision_set_status only moves proposed/accepted/rejected. decision_query searches the text; with semantic: true it also ranks by meaning.`,
  },
  {
    id: "knowledge",
    title: "Knowledge",
    body: `Search before you redo research: knowledge_search ranks notes by words and meaning together (mode: hybrid); lexical_only: true ranks by words alone.
Write down what you learn with knowledge_write (kind note, runbook, finding or snippet; tags; a project or tenant-wide). It answers at once with embedding_status: pending,
and the note is found by its words until its embedding is made, shortly after. knowledge_update patches title, body or tags; expected_version guards against overwriting.
The result's embedder says what ranked by meaning: local-hash-* is the local, lexical stand-in, not a semantic model.
To look across everything at once, search: one keyword query over projects, tasks, decisions, notes, comments, work requests and change events, best match first
(every word must appear; fragments of three or more characters also match inside words). It is not semantic: search for the words the text would use.`,
  },
  {
    id: "skills",
    title: "Skills",
    body: `Skills are versioned markdown playbooks identified by slug (skills toolset). skill_list shows the tenant-wide library plus a project's own skills,
which shadow tenant-wide ones of the same slug; skill_get returns the body to follow; skill_upsert creates or updates one, with expected_version to avoid overwriting someone else's change; every version is kept, and skill_get with version reads an earlier one.`,
  },
  {
    id: "handoffs",
    title: "Handoffs and the inbox",
    body: `handoff_create sends a handoff, question, review, collab or approval to one or more actors; a fingerprint keeps one live copy.
Recipients claim (one wins), respond and resolve. inbox lists what is addressed to you until you ack it: act first, then pass ack: [ids].
A review is answered with response.verdict: approved, changes_requested or rejected; the verdict resolves it, and the last two send the task back to in_progress.`,
  },
  {
    id: "plans",
    title: "Plans",
    body: `Plans live in toolset plans (/mcp?toolsets=plans). A plan is seed 004's EnhancedPlanOutput: goal, scope, steps with depends_on, risks, milestones.
Write one with create_plan (a language model over the code index) or by hand with save_plan; refine_plan makes the next version, view_history, compare_plan_versions and rollback_plan keep every version.
request_approval sends it to approvers' inboxes as an approval handoff; respond_approval (approve, reject, request_modification) answers, and approve makes the plan approved.
plan_to_tasks turns the steps into tasks of a project in one batch (dependencies, acceptance criteria, label plan): from then on claim them with task_claim like any task, and each step's state follows its task.
Without tasks, start_step, complete_step and fail_step (retry, skip, skip_dependents) move steps; view_progress shows ready steps, what is in progress and the percentage done.
visualize_plan draws the dependencies, architecture or a gantt chart as Mermaid; execute_plan previews, or with apply_changes commits, a step's generated changes on a new branch.`,
  },
  {
    id: "git-and-repos",
    title: "Git and repositories",
    body: `repo_register records a repository by its remote (credentials are stripped), repo_link ties it to a project (changing a link's role takes expected_role),
and task_code_ref records the commit, branch or PR that delivered a task (the evidence done may require).
The git toolset (opt in: ?toolsets=git) works on GitHub itself, not a checkout: every tool takes repo (owner/name or a registered repository).
Read: git_status (a branch vs its base, PR, checks, the commits its submodules pin), git_log, git_diff_summary, git_inventory and git_parity across repositories, list_presets.
Write: batch_commit (files inline, commits in order), git_merge (auto: fast-forward, rebase, merge commit) and git_cherry_pick. Branches move once, never forced:
a concurrent push makes the call fail with a retryable conflict, nothing half-applied. github_not_configured means an operator must connect your tenant.`,
  },
  {
    id: "runs-and-subagents",
    title: "Runs and subagents",
    body: `Every burst of work is a run in a tree of runs. Your MCP session's run is minted by its first write (reads never mint one)
and every later write in the session is attributed to it: activity rows carry its run_id. Calls without an Mcp-Session-Id have no run.
The runs toolset (?toolsets=runs): run_fork registers a child run (kind subagent) under your current run; hand its run_key (run-…) to a subagent working under your key
(only a run's own actor, or an operator key, may heartbeat or end it: not_run_owner).
run_heartbeat keeps a long quiet run alive and records head_sha, branch, dirty, repository_id and counts; task_code_ref then defaults repository, branch and sha from it.
A running run with no heartbeat for the server's window (2h by default) is marked abandoned by the run reaper; your writes refresh your session's run on their own.
run_end closes a run as succeeded, failed or cancelled; ending your session's run makes your next write start a fresh one. Ended runs refuse changes (run_ended).
run_query lists runs (actor_id "me", status, kind, root_run_id, run_series_key); run_get with include_children returns a whole tree; run_summary counts what a run produced.
A recurring job sends X-Run-Series-Key on its requests so its runs form a series. Over MCP your own calls stay attributed to your session's run, not a forked child.`,
  },
  {
    id: "sessions-and-loops",
    title: "Sessions and loops",
    body: `The initialize response gives an Mcp-Session-Id; send it on every request and DELETE /mcp to end the session.
A loop that wakes on a schedule should start each tick with whoami, whose delta covers what happened since its last call.`,
  },
  {
    id: "errors-and-recovery",
    title: "Errors and recovery",
    body: `Every failure is { ok: false, error: { code, message, hint, retryable } }: follow the hint. retryable: true means the same call may succeed later.
A blame miss or an unknown changeset is not a failure: the payload's error string says so.
invalid_input names the parameter: every string and list has a limit (tools/list shows maxLength, maxItems and x-max-bytes with ?schemas=full, and the error names the bound), identifiers and titles are one line without control characters, and one call's arguments stay under 2 MiB and 24 levels of nesting.
An answer is at most 100,000 characters of JSON: over that it carries truncation (what was cut, and a hint: for a list, the limit that pages through without a gap). The list tools with big rows take fields: [keys] to answer less of each item.
rate_limited (HTTP 429) carries retry_after_seconds: wait that long. Limits count units: each composite op and each batch item beyond 10 is one.
A call needing more units than are left does nothing (its message says how many: split it); those answers carry rate_limit: { counted, remaining }.
Secret-shaped text in a write is stored masked, with a warning; pass allow_secrets: true only when you mean to keep it.`,
  },
  {
    id: "idempotency",
    title: "Idempotency",
    body: `Writes take idempotency_key; the same key and arguments return the first result with idempotent_replay: true.
Your own keys last 24 hours. Without one, a write (log_change and the work-ledger writes) gets a key from its arguments and your session's run: the identical call resent at once, with or without a session, replays the first result instead of writing twice.
It stays a retry for at most ${DERIVED_WINDOW_MS / 60_000} minutes and only while nothing came between: another call of the same tool by you, or anyone's write to what the first call touched, makes it a new call.
To repeat a call on purpose at once (claim-next for a second task), pass your own idempotency_key. task_claim by id and run_heartbeat always run; an empty claim-next is answered afresh.`,
  },
  {
    id: "feedback",
    title: "Feedback",
    body: `When this server gets in your way, file it with feature_request_create (bug, friction, capability or docs) and read the outcome with feature_request_query.
The server's operators move it open → accepted → in_progress → shipped, or to declined (feature_request_set_status, operator keys only); you are notified of each move, and feature_request_query with its id shows the history.
Never include secrets: the text goes to the server's operators.`,
  },
  {
    id: "glossary",
    title: "Glossary",
    body: `actor: an agent, human or service with an API key. tenant: an isolated team space. entity path: what a change touched.
lease: how long a claim holds. fencing token: the number of a lease, raised by every new claim. operator key: a key that may force past leases. changeset: a slug grouping related changes. fingerprint: a de-duplication key for live requests.`,
  },
];

export const GUIDE_INDEX = `agent-ledger guide. Topics (call guide with topic, or read ledger://guide/{topic}):\n${GUIDE_TOPICS.map((t) => `- ${t.id}: ${t.title}`).join("\n")}`;

export const findTopic = (id: string): GuideTopic | undefined => GUIDE_TOPICS.find((t) => t.id === id);

export const renderTopic = (t: GuideTopic): string => `# ${t.title}\n\n${t.body}\n`;
