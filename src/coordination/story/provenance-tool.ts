/** provenance: claim → decisions → change events → commits → review verdicts → CI, from one starting point. */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { findRepository } from "../../work/repos/model";
import { normalizePath } from "../../work/reservations/globs";
import { findTask, taskRefField } from "../../work/tasks/model";
import { ENTRY_KINDS, MAX_LIMIT, provenance, type ProvenanceStart } from "./provenance";

const entrySchema = z.object({
  kind: z.enum(ENTRY_KINDS).describe("claim, decision, change (a change-ledger event), commit, pr, review or ci."),
  at: z.string().describe("When it happened (UTC ISO-8601)."),
  actor: z
    .object({
      id: z.string().nullable().describe("The actor's id, or null for someone known only to GitHub (a commit author, a check's sender)."),
      name: z.string().describe('Their name ("" when unknown).'),
    })
    .describe("Who did it."),
  summary: z.string().describe("One line."),
  task_id: z.string().nullable().describe("The task it belongs to, or null."),
  task_key: z.string().nullable().describe("That task's KEY-number, or null."),
  decision_id: z.string().nullable().describe("decision: its id."),
  decision_title: z.string().nullable().describe("decision: its title."),
  event_id: z.string().nullable().describe("change: the event's id."),
  entity_path: z.string().nullable().describe("change: the entity that changed."),
  change_type: z.string().nullable().describe("change: what happened to it."),
  sha: z.string().nullable().describe("commit, change (its git_commit), review, ci: the commit."),
  repository: z.string().nullable().describe("owner/name of the commit, pull request, review or check, or null."),
  pr_number: z.number().int().nullable().describe("pr, review: the pull request's number."),
  verdict: z.string().nullable().describe("review: approved, changes_requested, rejected, or a reactive review's findings and risk."),
  check_name: z.string().nullable().describe("ci: the check run, suite or workflow."),
  conclusion: z.string().nullable().describe("ci: success, failure, … (its status while it runs)."),
  url: z.string().nullable().describe("review, ci: where to see it on GitHub, or null."),
});

export const provenanceTool = defineTool({
  name: "provenance",
  title: "Provenance of a task, path, commit or pull request",
  toolset: "coordination",
  description:
    "From one starting point (task_id; repository_id + path; sha; or repository_id + pr_number) the chain claim → decisions → change events → commits → " +
    "review verdicts → CI results, oldest first, each entry with its actor, time and identifying fields. Links are the ledgers' own: a task's code refs " +
    "(commits, branches, PRs), events naming a commit or the task key as changeset, or logged by a claimer in the task's project while it was claimed. " +
    "CI results are the check_run, check_suite and workflow_run webhook deliveries stored for those commits (none if the repository sends none, or past the deliveries' 30-day retention). truncated says something was cut.",
  input: z.object({
    task_id: taskRefField("Start from this task.").optional(),
    repository_id: z.string().min(1).max(200).optional().describe("The registered repository (id or owner/name): with path or pr_number, and optionally with sha."),
    path: z.string().min(1).max(1024).optional().describe("Start from this file (repository-relative); needs repository_id."),
    sha: z
      .string()
      .max(64)
      .regex(/^[0-9a-fA-F]{7,64}$/, "sha must be 7–64 hex characters")
      .optional()
      .describe("Start from this commit (full or abbreviated)."),
    pr_number: z.number().int().min(1).max(1_000_000_000).optional().describe("Start from this pull request; needs repository_id."),
    limit: z.number().int().min(1).max(MAX_LIMIT).default(100).describe(`Entries to return (at most ${MAX_LIMIT}).`),
  }),
  output: z.object({
    start: z
      .object({ kind: z.enum(["task", "path", "commit", "pr"]).describe("What the chain starts from."), ref: z.string().describe("It, as resolved (task key, path, sha, owner/name#n).") })
      .describe("The starting point."),
    items: z.array(entrySchema).describe("The chain, oldest first."),
    counts: z.record(z.enum(ENTRY_KINDS), z.number().int()).describe("Entries found per kind, before limit."),
    truncated: z.boolean().describe("Some of the chain was left out: more entries than limit, or a read hit its bound. Start from a narrower point (a commit, a path) to see the rest."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const starts = [input.task_id, input.path, input.sha, input.pr_number].filter((v) => v !== undefined).length;
    const hint = "Pass exactly one of task_id, path (with repository_id), sha (repository_id optional) or pr_number (with repository_id).";
    if (starts !== 1) throw invalidInput(starts === 0 ? "No starting point given." : "More than one starting point given.", hint);
    if ((input.path !== undefined || input.pr_number !== undefined) && input.repository_id === undefined) {
      throw invalidInput(`${input.path !== undefined ? "path" : "pr_number"} needs repository_id.`, hint);
    }
    if (input.task_id !== undefined && input.repository_id !== undefined) throw invalidInput("repository_id does not go with task_id.", hint);
    let start: ProvenanceStart;
    let ref: string;
    if (input.task_id !== undefined) {
      const task = await findTask(ctx, input.task_id);
      start = { kind: "task", ref: task.id };
      ref = task.ref;
    } else {
      const repo = input.repository_id === undefined ? null : await findRepository(ctx, input.repository_id);
      const repositoryId = repo?.id ?? null;
      if (input.path !== undefined) {
        const path = normalizePath(input.path);
        start = { kind: "path", repositoryId: repositoryId!, path };
        ref = `${repo!.slug}:${path}`;
      } else if (input.sha !== undefined) {
        start = { kind: "commit", sha: input.sha.toLowerCase(), repositoryId };
        ref = input.sha.toLowerCase();
      } else {
        start = { kind: "pr", repositoryId: repositoryId!, number: input.pr_number! };
        ref = `${repo!.slug}#${input.pr_number}`;
      }
    }
    const found = await provenance(ctx, start, input.limit);
    return { start: { kind: start.kind, ref }, items: found.entries, counts: found.counts, truncated: found.truncated };
  },
  summarize: (r) =>
    `${r.items.length} entr${r.items.length === 1 ? "y" : "ies"} from ${r.start.kind} ${r.start.ref}: ${Object.entries(r.counts)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`)
      .join(", ")}${r.truncated ? " (truncated)" : ""}.`,
});
