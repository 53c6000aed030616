/**
 * execute_plan (seed 004 "Execution Tools"): the model writes a plan's steps as file changes,
 * previewed by default; with apply_changes they land as commits on the plan's branch on GitHub.
 * The answer is the seed's: a Markdown report and a <details> block with the whole JSON result.
 */
import { z } from "zod";
import { repoField } from "../../git/repo";
import { defineTool } from "../../core/define-tool";
import { planParam } from "../document/params";
import { EXECUTION_MODES, executePlan, MAX_EXECUTE_STEPS } from "../execution/run";
import { progressSchema } from "../progress/engine";
import { planIdField } from "../document/schema";
import { GENERATED_CHANGE_TYPES } from "../execution/step-changes";

const input = z.object({
  plan: planParam
    .optional()
    .describe(
      "The plan to execute (EnhancedPlanOutput): a JSON string, as the seed takes it, or the object itself; up to 256 KB. A plan whose id names one of your saved plans, unchanged, counts as that saved plan. Pass plan or plan_id.",
    ),
  plan_id: planIdField.optional().describe("A saved plan's id, instead of plan: its current version runs, its steps' recorded state picks the steps, and committed steps are recorded."),
  mode: z
    .enum(EXECUTION_MODES)
    .default("single_step")
    .describe(
      "single_step (default): the step step_number names. all_ready: every step whose dependencies are done (for a plan sent as JSON: every step without depends_on). full_plan: steps in dependency order, each once its dependencies are done, up to max_steps.",
    ),
  step_number: z.number().int().min(1).max(100_000).optional().describe("The step to execute; required when mode is single_step, refused otherwise."),
  apply_changes: z
    .boolean()
    .default(false)
    .describe("false (default): preview only, nothing is written anywhere. true: commit each step's changes (one commit per step) on branch in repo, and record them on a saved plan's steps."),
  max_steps: z.number().int().min(1).max(MAX_EXECUTE_STEPS).default(5).describe(`Steps to execute in one call (default 5, at most ${MAX_EXECUTE_STEPS}).`),
  stop_on_failure: z.boolean().default(true).describe("Stop at the first step that fails (default true); false goes on with the steps that do not depend on it."),
  additional_context: z.string().max(20_000).optional().describe("More for the model: conventions, constraints, what to avoid (scrubbed of secret-shaped text before it is sent)."),
  repo: repoField.optional().describe("The repository the plan changes: owner/name, or a registered repository's id or slug. The steps' files are read from it; required when apply_changes is true."),
  branch: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe(
      "Branch to commit on; default plan/<plan id>, created from base when missing (the repository's default branch is written only when named here, after confirmation where the client can be asked). When it exists, the steps start from its head.",
    ),
  base: z.string().min(1).max(256).optional().describe("Where a new branch starts (a branch or commit); default the repository's default branch."),
});

const changeSchema = z.object({
  path: z.string().describe("File path, relative to the repository root."),
  change_type: z.enum(GENERATED_CHANGE_TYPES).describe("create (the file did not exist), modify or delete, as found against the files the step started from."),
  content: z.string().optional().describe("The file's whole new content; absent for delete."),
  explanation: z.string().describe("Why the file changes, in the model's words."),
});

const stepResultSchema = z.object({
  step_number: z.number().int().describe("The step."),
  title: z.string().describe("The step's title."),
  success: z.boolean().describe("Whether the step's changes were generated (and, with apply_changes, committed)."),
  generated_code: z.array(changeSchema).describe("The step's changes, one per file."),
  reasoning: z.string().describe("The model's account of how it did the step."),
  error: z
    .object({
      code: z
        .string()
        .describe(
          "llm_bad_output, llm_timeout, llm_unavailable, llm_rejected, change_outside_step, no_changes, no_files, too_many_files, unsafe_path, secret_in_file, file_unreadable, file_too_large, context_too_large, change_too_large, commit_failed, stage_failed or not_committed.",
        ),
      message: z.string().describe("What went wrong."),
      hint: z.string().describe("How to recover."),
      retryable: z.boolean().describe("Whether running the step again may succeed."),
    })
    .optional()
    .describe("Why the step failed."),
  duration_ms: z.number().int().describe("Time the step took."),
  commit: z
    .object({ sha: z.string().describe("Commit SHA.") })
    .optional()
    .describe("The step's commit (apply_changes)."),
  warnings: z.array(z.string()).describe("Masked secrets, files left unchanged."),
});

const output = z.object({
  success: z.boolean().describe("Whether every executed step succeeded."),
  plan_id: z.string().nullable().describe("The plan's id (null for a plan sent without one)."),
  saved_plan: z.boolean().describe("Whether the plan is a saved plan, whose steps' state was used and whose committed steps were recorded."),
  mode: z.enum(EXECUTION_MODES).describe("The mode that ran."),
  apply_changes: z.boolean().describe("Whether changes were committed (false: a preview)."),
  step_results: z.array(stepResultSchema).describe("One per executed step, in the order they ran."),
  next_ready_steps: z.array(z.number().int()).describe("Steps ready after this call."),
  progress: progressSchema.describe("Where the plan's steps stand after this call (a preview changes nothing)."),
  error: z.string().optional().describe("The first failed step's error."),
  duration_ms: z.number().int().describe("Time the call took."),
  model: z.string().describe("provider:model that wrote the changes."),
  github: z
    .object({
      repo: z.string().describe("owner/name."),
      branch: z.string().describe("The branch the changes are for."),
      base: z.string().describe("Where a new branch starts."),
      start_sha: z.string().describe("The commit the steps' files were read at: the branch head when it existed, else base."),
      branch_existed: z.boolean().describe("Whether the branch existed before the call."),
      branch_created: z.boolean().describe("Whether this call created the branch."),
      head_sha: z.string().nullable().describe("The branch head after the commits, or null when nothing was committed."),
      commits: z.array(z.object({ step_number: z.number().int().describe("The step."), sha: z.string().describe("Its commit.") })).describe("One commit per committed step."),
    })
    .nullable()
    .describe("The repository side, when repo was given."),
  recorded_steps: z.array(z.number().int()).describe("Steps of the saved plan recorded as completed with their commit."),
  plan_status: z.string().nullable().describe("The saved plan's status after the call, or null."),
  warnings: z.array(z.string()).describe("Things worth knowing: no repo given, masked secrets, max_steps reached."),
});

const PREVIEW_LINES = 50;

function preview(content: string): string {
  const lines = content.split("\n");
  let ticks = "```";
  while (content.includes(ticks)) ticks += "`";
  const more = lines.length > PREVIEW_LINES ? `\n… (${lines.length - PREVIEW_LINES} more lines)` : "";
  return `${ticks}\n${lines.slice(0, PREVIEW_LINES).join("\n")}${more}\n${ticks}`;
}

/** The seed's answer: a Markdown report, then the whole JSON result in a <details> block. */
export function executionReport(r: z.output<typeof output>): string {
  const out = [
    "# Plan Execution Result",
    "",
    `**Plan ID:** ${r.plan_id ?? "(none)"}${r.saved_plan ? " (saved)" : ""}`,
    `**Success:** ${r.success ? "✅ Yes" : "❌ No"}`,
    `**Mode:** ${r.mode}${r.apply_changes ? ", changes applied" : ", preview only"}`,
    `**Duration:** ${r.duration_ms}ms`,
    `**Progress:** ${r.progress.completed_steps}/${r.progress.total_steps} steps (${r.progress.percentage}%)`,
    "",
  ];
  if (r.error) out.push("## Error", r.error, "");
  out.push("## Step Results", "");
  for (const s of r.step_results) {
    out.push(`### Step ${s.step_number}: ${s.title}`, `- **Status:** ${s.success ? "✅ Success" : "❌ Failed"}`, `- **Duration:** ${s.duration_ms}ms`);
    if (s.reasoning) out.push(`- **Reasoning:** ${s.reasoning}`);
    if (s.error) out.push(`- **Error:** [${s.error.code}] ${s.error.message}`, `- **Hint:** ${s.error.hint}`);
    if (s.commit) out.push(`- **Commit:** ${s.commit.sha}`);
    if (s.generated_code.length > 0) {
      out.push("", `#### Generated Changes (${r.apply_changes && s.commit ? "Applied" : "Preview Only"})`, "");
      for (const c of s.generated_code) {
        out.push(`**${c.change_type.toUpperCase()}:** \`${c.path}\``, `> ${c.explanation.replace(/\n/g, " ")}`, "");
        if (c.content !== undefined && !s.commit) out.push(preview(c.content), "");
      }
    }
    out.push("");
  }
  if (r.github) {
    out.push(
      "## Repository",
      `- **Repo:** ${r.github.repo}`,
      `- **Branch:** ${r.github.branch}${r.github.branch_created ? " (created)" : r.github.branch_existed ? "" : " (not created)"}`,
      `- **Started from:** ${r.github.start_sha}`,
    );
    if (r.github.head_sha) out.push(`- **Head:** ${r.github.head_sha}`);
    for (const c of r.github.commits) out.push(`- Step ${c.step_number}: ${c.sha}`);
    if (r.recorded_steps.length > 0) out.push(`- **Recorded on the plan:** steps ${r.recorded_steps.join(", ")}${r.plan_status ? ` (plan ${r.plan_status})` : ""}`);
    out.push("");
  }
  if (r.next_ready_steps.length > 0) out.push("## Next Ready Steps", `Steps ready to execute: ${r.next_ready_steps.join(", ")}`, "");
  if (r.warnings.length > 0) out.push("## Warnings", ...r.warnings.map((w) => `- ${w}`), "");
  out.push("---", "", "<details>", "<summary>Full JSON Response</summary>", "", "```json", JSON.stringify(r, null, 2), "```", "</details>");
  return out.join("\n");
}

export const executePlanTool = defineTool({
  name: "execute_plan",
  title: "Execute plan steps",
  toolset: "plans",
  description:
    'Have the language model carry out plan steps: for each step it reads the files the step names (from repo on GitHub) and writes each changed file whole, with an explanation; only the files the step names may change. Preview by default: nothing is written. With apply_changes, each step becomes one commit ("plan <id> step N: <title>") on branch (default plan/<plan id>, created from base; the default branch only when named) through batch_commit, and a saved plan\'s steps are recorded as completed with their commit. mode: single_step (step_number), all_ready, or full_plan (dependency order, up to max_steps). Answers a Markdown report with the JSON result in a <details> block. Needs a language model (llm_not_configured otherwise).',
  input,
  output,
  errorData: z.object({ step_results: z.array(stepResultSchema).describe("The executed steps, when every one failed.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotency: "derived",
  confirms: true,
  // A whole plan is minutes of model calls: a client that declares the tasks extension gets a task to poll.
  task: { background: true, pollMs: 5000 },
  run: (ctx, args) => executePlan(ctx, args),
  text: (r) => executionReport(r),
});
