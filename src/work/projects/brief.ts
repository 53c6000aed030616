import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { activityItemSchema, EMBEDDED_LIST_MAX, listsSchema } from "../shared";
import { taskSummarySchema } from "../tasks/summary";
import { projectSchema, readProjectBrief, taskCountsSchema } from "./model";

export const projectBriefTool = defineTool({
  name: "project_brief",
  title: "Project brief",
  toolset: "projects",
  description: "One-call orientation on a project: status, top tasks, decisions, knowledge, repositories, activity.",
  input: z.object({
    project: z.string().min(1).max(100).describe("Project key or id."),
    max_tasks: z.number().int().min(0).max(50).default(10).describe("Open tasks to include."),
    max_decisions: z.number().int().min(0).max(50).default(10).describe("Recent decisions to include."),
    max_knowledge: z.number().int().min(0).max(50).default(10).describe("Knowledge titles to include."),
    max_activity: z.number().int().min(0).max(100).default(20).describe("Recent activity items."),
  }),
  output: z.object({
    project: projectSchema.describe("The project."),
    task_counts: taskCountsSchema.describe("Task counts."),
    top_open_tasks: z.array(taskSummarySchema).describe("Open tasks: ready first, then by priority."),
    recent_decisions: z
      .array(z.object({ id: z.string().describe("Decision id."), title: z.string().describe("Title."), status: z.string().describe("Status."), at: z.string().describe("When logged.") }))
      .describe("Recent decisions, newest first."),
    knowledge: z
      .array(
        z.object({
          id: z.string().describe("Note id."),
          title: z.string().describe("Title."),
          kind: z.string().describe("note, runbook, finding or snippet."),
          updated_at: z.string().describe("Last changed."),
        }),
      )
      .describe("The project's knowledge notes, most recently changed first (knowledge_search for their text)."),
    repositories: z
      .array(z.object({ id: z.string().describe("Repository id."), slug: z.string().describe("owner/name."), role: z.string().describe("Role.") }))
      .describe(`Linked repositories, by role then slug (up to ${EMBEDDED_LIST_MAX}).`),
    recent_activity: z.array(activityItemSchema).describe("Recent activity in the project, newest first."),
    lists: listsSchema({ repositories: "Linked repositories (repo_query with project_id lists them all, by slug)." }),
  }),
  annotations: READ_ONLY,
  run: (ctx, input) => readProjectBrief(ctx, input),
  summarize: (r) => `${r.project.key} (${r.project.status}): ${r.task_counts.total} task(s), ${r.task_counts.ready} ready, ${r.task_counts.blocked} blocked.`,
});
