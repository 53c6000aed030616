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
    const where = ["s.tenant_id = ?", "s.project_id IN (?, '')", "s.status = ?"];
    const params: unknown[] = [ctx.tenantId, projectId, input.status];
    // Shadowing: a tenant-wide skill is hidden when the project has one with its slug.
    where.push("NOT (s.project_id = '' AND ? <> '' AND EXISTS (SELECT 1 FROM skills p WHERE p.tenant_id = s.tenant_id AND p.project_id = ? AND p.slug = s.slug AND p.status = s.status))");
    params.push(projectId, projectId);
    if (input.q?.trim()) {
      where.push("(instr(lower(s.slug), lower(?)) > 0 OR instr(lower(s.name), lower(?)) > 0 OR instr(lower(s.description), lower(?)) > 0)");
      params.push(input.q.trim(), input.q.trim(), input.q.trim());
    }
    if (input.tag) {
      where.push("EXISTS (SELECT 1 FROM json_each(s.tags) t WHERE t.value = ?)");
      params.push(input.tag);
    }
    const rows = await listSkills(ctx, where, params, input.limit);
    return { items: rows.map((r) => toSkill(r, input.include_body)) };
  },
  summarize: (r) => `${r.items.length} skill(s).`,
});
