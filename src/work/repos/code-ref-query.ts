import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { cursorField, limitField, keysetPage } from "../shared";
import { findObject } from "../collab/model";
import { runFilterValue } from "../runs/model";
import { findTask } from "../tasks/model";
import { staleMarks, staleSchema } from "../memory/model";
import { CODE_REF_OBJECTS, type CodeRefFilter, codeRefSchema, findRepository, listCodeRefs, PR_STATES, REF_TYPES } from "./model";

export const codeRefQueryTool = defineTool({
  name: "code_ref_query",
  title: "Find code refs",
  toolset: "repos",
  description: "What code delivered this work: code refs by object, repository, ref type, PR state or run, newest first.",
  input: z.object({
    object_type: z.enum(CODE_REF_OBJECTS).optional().describe("Kind of object."),
    object_id: z.string().min(1).max(100).optional().describe("The object (a task may be given by KEY-number)."),
    repository_id: z.string().min(1).max(200).optional().describe("Repository id or owner/name."),
    ref_type: z.enum(REF_TYPES).optional().describe("Only this ref type."),
    pr_state: z.enum(PR_STATES).optional().describe("Only PRs in this state."),
    run_id: z.string().min(1).max(100).optional().describe("Only refs recorded in this run (run_key or run id)."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z
      .array(codeRefSchema.extend({ stale: staleSchema.describe("The push that changed one of its linked paths since it was recorded or updated, or null.") }))
      .describe("Code refs, newest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const filter: CodeRefFilter = { objectType: input.object_type, refType: input.ref_type, prState: input.pr_state };
    if (input.object_id) {
      // Resolved the way code_ref_add resolves it: a task by KEY-number, a project by key.
      filter.objectId =
        input.object_type === "task" || input.object_type === "project"
          ? (await findObject(ctx, input.object_type, input.object_id)).id
          : !input.object_type && /^[A-Za-z][A-Za-z0-9]{1,15}-\d+$/.test(input.object_id)
            ? (await findTask(ctx, input.object_id)).id
            : input.object_id;
    }
    if (input.repository_id) filter.repositoryId = (await findRepository(ctx, input.repository_id)).id;
    if (input.run_id) filter.runId = await runFilterValue(ctx, input.run_id);
    filter.cursor = input.cursor;
    const rows = await listCodeRefs(ctx, filter, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.created_at, last.id]);
    const marks = await staleMarks(
      ctx,
      page.map((r) => ({ type: "code_ref" as const, id: r.id })),
    );
    return { items: page.map((r) => ({ ...r, stale: marks.get(`code_ref:${r.id}`) ?? null })), ...cursor };
  },
  summarize: (r) => `${r.items.length} code ref(s).`,
});
