import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { invalidInput, notFound, ToolError } from "../../core/errors";
import { iso } from "../../core/time";
import { clearMarkStatement } from "../memory/model";
import { applyCodeRefChange, codeRefSchema, findLiveCodeRef, PR_STATES, SHA } from "./model";

export const codeRefUpdateTool = defineTool({
  name: "code_ref_update",
  title: "Update a code ref",
  toolset: "repos",
  description:
    "Move a PR forward (pr_state open, draft, merged, closed) or fix a ref's sha, title or url. A PR that becomes merged or closed records pr.merged / pr.closed on the timeline. Any update clears the ref's stale mark.",
  input: z.object({
    code_ref_id: z.string().min(1).max(100).describe("The code ref."),
    patch: z
      .object({
        pr_state: z.enum(PR_STATES).optional().describe("New PR state."),
        sha: SHA.optional().describe("Commit SHA."),
        title: z.string().max(300).optional().describe("Title."),
        url: z.string().url().max(500).optional().describe("Link."),
      })
      .strict()
      .refine((p) => Object.keys(p).length > 0, "patch names no field")
      .describe("Fields to change."),
  }),
  output: z.object({ code_ref: codeRefSchema.describe("The ref after the change."), changed: z.array(z.string()).describe("Fields that changed.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const before = await findLiveCodeRef(ctx, input.code_ref_id);
    if (!before) throw notFound("code ref", input.code_ref_id, "code_ref_query lists them.");
    if (input.patch.pr_state && before.ref_type !== "pr") throw invalidInput("pr_state applies to PR refs only.", "Drop pr_state for this ref.");
    // A merged PR stays merged; a closed one may be reopened.
    if (input.patch.pr_state && before.pr_state === "merged" && input.patch.pr_state !== "merged") {
      throw new ToolError("invalid_transition", "A merged PR cannot move to another state.", { hint: "Record a new PR ref for follow-up work." });
    }
    const next: Record<string, string | null> = {};
    if (input.patch.pr_state !== undefined) next.pr_state = input.patch.pr_state;
    if (input.patch.sha !== undefined) next.sha = input.patch.sha.toLowerCase();
    if (input.patch.title !== undefined) next.title = input.patch.title;
    if (input.patch.url !== undefined) next.url = input.patch.url;
    const result = await applyCodeRefChange(ctx, before, next);
    // Whoever updates the ref has looked at it: a push that changed its paths is answered.
    await clearMarkStatement(ctx, "code_ref", before.id, iso(ctx.clock.now())).run();
    return result;
  },
  summarize: (r) => `Code ref ${r.code_ref.id}: ${r.changed.join(", ") || "no change"}.`,
});
