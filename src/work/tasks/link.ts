/** task_link: dependency edges and parent links, cycle-checked edge by edge. */
import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { activityStatement } from "../shared";
import { addDependencyStatement, clearParentStatement, dependencyCount, findTask, MAX_DEPENDENCIES, removeDependencyStatement, setParentStatement, taskRefField, taskSchema } from "./model";

export const taskLinkTool = defineTool({
  name: "task_link",
  title: "Link tasks",
  toolset: "tasks",
  description: `Add or remove dependencies, set or clear the parent. Edges that would close a cycle (or pass ${MAX_DEPENDENCIES}) come back in cycle_rejected.`,
  input: z.object({
    task_id: taskRefField("The task whose links change."),
    add_depends_on: z.array(z.string().min(1).max(100)).max(50).optional().describe("Tasks to wait on."),
    remove_depends_on: z.array(z.string().min(1).max(100)).max(50).optional().describe("Dependencies to drop."),
    set_parent_task_id: z.string().min(1).max(100).optional().describe("New parent task."),
    clear_parent: z.boolean().optional().describe("Remove the parent."),
  }),
  output: z.object({
    task: taskSchema.describe("The task after the change."),
    added: z.array(z.string()).describe("Dependency ids added."),
    removed: z.array(z.string()).describe("Dependency ids removed."),
    cycle_rejected: z
      .array(z.object({ depends_on: z.string().describe("The refused dependency (or parent)."), reason: z.string().describe("Why.") }))
      .describe(`Edges refused, with the reason: they would close a cycle, or the task already waits on ${MAX_DEPENDENCIES} tasks.`),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    if (input.set_parent_task_id && input.clear_parent) {
      throw invalidInput("set_parent_task_id and clear_parent were both given.", "Pass one of them.");
    }
    const task = await findTask(ctx, input.task_id);
    const resolve = async (refs: string[] | undefined) => Promise.all((refs ?? []).map(async (r) => (await findTask(ctx, r)).id));
    const add = [...new Set(await resolve(input.add_depends_on))];
    const remove = [...new Set(await resolve(input.remove_depends_on))];
    const parent = input.set_parent_task_id ? (await findTask(ctx, input.set_parent_task_id)).id : null;
    const now = iso(ctx.clock.now());
    const rejected: Array<{ depends_on: string; reason: string }> = [];

    // Each edge write is followed by its own activity row, recorded only if the write happened,
    // so the whole link change and its timeline land in one atomic batch.
    type Step = { kind: "add" | "remove" | "parent"; dep: string };
    const steps: Step[] = [];
    const statements: D1PreparedStatement[] = [];
    const push = (step: Step, write: D1PreparedStatement, verb: string, summary: string) => {
      steps.push(step);
      statements.push(write, activityStatement(ctx, { verb, objectType: "task", objectId: task.id, projectId: task.project_id, summary, metadata: { other: step.dep }, ifPreviousChanged: true }));
    };
    for (const dep of add) {
      if (dep === task.id) {
        rejected.push({ depends_on: dep, reason: "a task cannot depend on itself" });
        continue;
      }
      push({ kind: "add", dep }, addDependencyStatement(ctx, task.id, dep, MAX_DEPENDENCIES, now), "task.dependency_added", `${task.ref} now waits on ${dep}`);
    }
    for (const dep of remove) {
      push({ kind: "remove", dep }, removeDependencyStatement(ctx, task.id, dep), "task.dependency_removed", `${task.ref} no longer waits on ${dep}`);
    }
    if (parent === task.id) {
      rejected.push({ depends_on: parent, reason: "a task cannot be its own parent" });
    } else if (parent) {
      push({ kind: "parent", dep: parent }, setParentStatement(ctx, task.id, parent, now), "task.parent_set", `${task.ref} is now a subtask of ${parent}`);
    } else if (input.clear_parent && task.parent_task_id) {
      push({ kind: "parent", dep: "" }, clearParentStatement(ctx, task.id, now), "task.parent_cleared", `${task.ref} has no parent now`);
    }
    const results = statements.length > 0 ? await ctx.d1.batch<{ depends_on_task_id?: string; id?: string }>(statements) : [];
    const added: string[] = [];
    const removed: string[] = [];
    const refusedAdd = steps.some((step, i) => step.kind === "add" && results[2 * i]!.results.length === 0 && !task.depends_on.includes(step.dep));
    const full = refusedAdd && (await dependencyCount(ctx, task.id)) >= MAX_DEPENDENCIES;
    steps.forEach((step, i) => {
      const wrote = results[2 * i]!.results.length > 0;
      if (step.kind === "add") {
        if (wrote) added.push(step.dep);
        else if (!task.depends_on.includes(step.dep)) {
          rejected.push({
            depends_on: step.dep,
            reason: full
              ? `this task already waits on ${MAX_DEPENDENCIES} tasks, the most one task may wait on: group them under a parent task instead`
              : "it already depends, directly or not, on this task: the edge would close a cycle",
          });
        }
      } else if (step.kind === "remove") {
        if (wrote) removed.push(step.dep);
      } else if (!wrote && step.dep) {
        rejected.push({ depends_on: step.dep, reason: "the new parent is this task's own descendant: the parent link would close a cycle" });
      }
    });
    return { task: await findTask(ctx, task.id), added, removed, cycle_rejected: rejected };
  },
  summarize: (r) => `${r.task.ref}: ${r.added.length} added, ${r.removed.length} removed, ${r.cycle_rejected.length} rejected.`,
});
