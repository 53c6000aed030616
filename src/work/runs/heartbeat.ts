import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { findRepository } from "../repos/model";
import { runSchema, toRun } from "./model";
import { assertRunWritable, countsField, runRefField, targetRun, updateRunningRun } from "./model";

export const runHeartbeatTool = defineTool({
  name: "run_heartbeat",
  title: "Heartbeat a run",
  toolset: "runs",
  description:
    "Keep a long-running run alive (the run reaper marks runs with no heartbeat for a while as abandoned) and track where it stands: HEAD, branch, dirty flag, repository, counters. Later code refs default their repository, branch and sha from this. Defaults to your current run; an ended run is refused with run_ended, another actor's run with not_run_owner (only its owner or an operator key may heartbeat it).",
  input: z.object({
    run_key: runRefField("The run; defaults to your current run.").optional(),
    head_sha: z
      .string()
      .max(64)
      .regex(/^[0-9a-fA-F]{7,64}$/, "head_sha must be 7–64 hex characters")
      .optional()
      .describe("The commit HEAD points at now."),
    branch: z.string().min(1).max(250).optional().describe("The branch checked out now."),
    dirty: z.boolean().optional().describe("Whether the working tree has uncommitted changes."),
    repository_id: z.string().min(1).max(200).optional().describe("The repository the run works in (id or owner/name, registered with repo_register)."),
    counts: countsField.optional(),
  }),
  output: z.object({ run: runSchema.describe("The run after the heartbeat.") }),
  // No derived key: a heartbeat is idempotent by nature, and an identical one a minute later must
  // still move last_heartbeat_at.
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const run = await targetRun(ctx, input.run_key);
    await assertRunWritable(ctx, run);
    const sets: Record<string, unknown> = { last_heartbeat_at: iso(ctx.clock.now()) };
    if (input.head_sha !== undefined) sets.head_sha = input.head_sha.toLowerCase();
    if (input.branch !== undefined) sets.branch = input.branch;
    if (input.dirty !== undefined) sets.dirty = input.dirty ? 1 : 0;
    if (input.repository_id !== undefined) sets.repository_id = (await findRepository(ctx, input.repository_id)).id;
    if (input.counts !== undefined) sets.counts = JSON.stringify(input.counts);
    return { run: toRun(await updateRunningRun(ctx, run, sets)) };
  },
  summarize: (r) => `${r.run.run_key} alive at ${r.run.last_heartbeat_at}.`,
});
