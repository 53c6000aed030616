import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { limitField } from "../shared";
import { findProject } from "../projects/model";
import { listSkills, skillSchema, toSkill } from "./model";

export const skillListTool = defineTool({
  name: "skill_list",
  title: "List skills",
  toolset: "skills",
  description: "The tenant's skills by slug: the tenant-wide library plus, with project_id, that project's skills (which shadow tenant-wide ones of the same slug). Metadata only unless include_body.",
  input: z.object({
    project_id: z.string().min(1).max(100).optional().describe("Include this project's skills (id or key)."),
    q: z.string().max(200).optional().describe("Text in slug, name or description."),
    tag: z.string().max(50).optional().describe("Only skills with this tag."),
    status: z.enum(["active", "archived"]).default("active").describe("active (default) or archived."),
    include_body: z.boolean().default(false).describe("Include each body."),
    limit: limitField(100, 500),
  }),
  output: z.object({ items: z.array(skillSchema).describe("Skills by slug.") }),
  fields: true,
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const projectId = input.project_id ? (await findProject(ctx, input.project_id)).id : "";
    const rows = await listSkills(ctx, { projectId, status: input.status, q: input.q?.trim(), tag: input.tag }, input.limit);
    return { items: rows.map((r) => toSkill(r, input.include_body)) };
  },
  summarize: (r) => `${r.items.length} skill(s).`,
});
