import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { findObject } from "../collab/model";
import { findTask } from "../tasks/model";
import { linkedPaths, linkedPathsField, linkStatements, resolveLinks } from "../memory/model";
import { addCodeRef, CODE_REF_OBJECTS, codeRefSchema, refFields, type CodeRef } from "./model";
import type { Ctx } from "../../core/context";

const pathsField = linkedPathsField(
  "Paths or globs the code touches, in its repository (owner/name:path for another): a push changing one marks the ref stale, and a task's ref paths feed task_claim's prior_attempts.",
).optional();

/** The ref's paths go to its own repository unless one names another; linked in the ref's own batch. */
const linking = (ctx: Ctx, paths: readonly string[] | undefined) =>
  paths?.length
    ? async (ref: { id: string; repositoryId: string | null; now: string }) =>
        linkStatements(ctx, "code_ref", ref.id, await resolveLinks(ctx, paths, async () => ref.repositoryId), ref.now, { replace: false })
    : undefined;

const withPaths = async (ctx: Ctx, ref: CodeRef, paths: readonly string[] | undefined) => ({ code_ref: ref, paths: paths?.length ? await linkedPaths(ctx, "code_ref", ref.id) : [] });

const outputSchema = z.object({ code_ref: codeRefSchema.describe("The recorded ref."), paths: z.array(z.string()).describe("Its linked paths, as owner/name:pattern.") });

export const taskCodeRefTool = defineTool({
  name: "task_code_ref",
  title: "Record a task's code",
  toolset: "repos",
  description:
    "Record the code that delivered a task: a commit, branch, PR, tag or compare. This is the evidence requires_evidence asks for. Repository, branch and sha default from your current run (its last run_heartbeat), so a commit is often just task_id and ref_type; the repository otherwise defaults to the project's only primary repository.",
  input: z.object({ task_id: z.string().min(1).max(100).describe("The task (id or KEY-number)."), ...refFields, paths: pathsField }),
  output: outputSchema,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, { task_id, paths, ...r }) => {
    const task = await findTask(ctx, task_id);
    return withPaths(ctx, await addCodeRef(ctx, "task", task.id, task.project_id, r, linking(ctx, paths)), paths);
  },
  summarize: (r) => `Recorded ${r.code_ref.ref_type} ${r.code_ref.id}.`,
});

export const codeRefAddTool = defineTool({
  name: "code_ref_add",
  title: "Add a code ref",
  toolset: "repos",
  description: "Attach a code reference (commit, branch, PR, tag, compare) to a task, decision, note or project. Same run-context defaults as task_code_ref.",
  input: z.object({
    object_type: z.enum(CODE_REF_OBJECTS).describe("task, decision, note or project."),
    object_id: z.string().min(1).max(100).describe("The object's id."),
    ...refFields,
    paths: pathsField,
  }),
  output: outputSchema,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, { object_type, object_id, paths, ...r }) => {
    if (object_type === "task") {
      const task = await findTask(ctx, object_id);
      return withPaths(ctx, await addCodeRef(ctx, "task", task.id, task.project_id, r, linking(ctx, paths)), paths);
    }
    const target = await findObject(ctx, object_type, object_id);
    return withPaths(ctx, await addCodeRef(ctx, object_type, target.id, target.projectId, r, linking(ctx, paths)), paths);
  },
  summarize: (r) => `Recorded ${r.code_ref.ref_type} ${r.code_ref.id}.`,
});
