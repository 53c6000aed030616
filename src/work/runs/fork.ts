import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { findRun, insertRun, noCurrentRun, runSchema, toRun } from "./model";

export const runForkTool = defineTool({
  name: "run_fork",
  title: "Fork a child run",
  toolset: "runs",
  description:
    "Register a child run (kind subagent) under your current run, recorded in the run tree; it starts from the parent's repository, branch and HEAD. The child is yours: hand its run_key to a subagent working under your key so it can heartbeat and end it (another actor's key is refused with not_run_owner unless it is an operator key). Over MCP your own later calls still attribute to your current run, not the child.",
  input: z.object({
    label: z.string().trim().min(1).max(200).describe('Short label, e.g. "migrate billing tests".'),
    goal: z.string().max(2000).optional().describe("What the child run is for."),
    agent_role: z.string().max(100).optional().describe("The role the subagent plays, e.g. reviewer or test-writer."),
  }),
  output: z.object({ run: runSchema.describe("The child run."), parent_run_key: z.string().describe("The run it was forked from (your current run).") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    if (!ctx.runId) throw noCurrentRun();
    const parent = await findRun(ctx, ctx.runId);
    const startedAt = iso(ctx.clock.now());
    // A key collision (1 in 2^40) just means another id.
    for (let attempt = 0; attempt < 3; attempt++) {
      const child = await insertRun(
        ctx,
        {
          id: uuidv7(ctx.clock.now().getTime()),
          kind: "subagent",
          parentRunId: parent.id,
          rootRunId: parent.root_run_id,
          label: input.label,
          goal: input.goal ?? "",
          agentRole: input.agent_role ?? "",
          runSeriesKey: null,
          startedAt,
          repo: { repositoryId: parent.repository_id, branch: parent.branch, headSha: parent.head_sha, dirty: parent.dirty },
        },
        (r) => [activityStatement(ctx, { verb: "run.forked", objectType: "run", objectId: r.id, summary: `forked: ${input.label}`, metadata: { parent_run_id: parent.id }, ifPreviousChanged: true })],
      );
      if (child) return { run: toRun(child), parent_run_key: parent.run_key };
    }
    throw new ToolError("conflict", "Could not mint a run key for the child run.", { hint: "Retry the call.", retryable: true });
  },
  summarize: (r) => `Forked ${r.run.run_key} under ${r.parent_run_key}.`,
});
