import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput, notFound } from "../../core/errors";
import { findProject } from "../projects/model";
import { findSkillVersion, resolveSkill, skillSchema, SLUG, toSkill } from "./model";

export const skillGetTool = defineTool({
  name: "skill_get",
  title: "Read a skill",
  toolset: "skills",
  description:
    "Fetch one skill's full body by slug or id (exactly one). The body is a markdown playbook: follow it as instructions. With project_id, that project's skill shadows a tenant-wide one of the same slug. Every version is kept: version reads an earlier one.",
  input: z.object({
    slug: SLUG.optional().describe("The skill's slug."),
    skill_id: z.string().min(1).max(100).optional().describe("The skill's id."),
    project_id: z.string().min(1).max(100).optional().describe("Project (id or key) whose skills take precedence."),
    version: z.number().int().min(1).max(1_000_000).optional().describe("Read this version instead of the current one."),
  }),
  output: z.object({ skill: skillSchema.describe("The skill, with its body.") }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    if ((input.slug === undefined) === (input.skill_id === undefined)) throw invalidInput("Pass exactly one of slug and skill_id.", "Name the skill by slug (usual) or by id.");
    const projectId = input.project_id ? (await findProject(ctx, input.project_id)).id : "";
    const row = await resolveSkill(ctx, { slug: input.slug, id: input.skill_id }, projectId);
    if (!row) throw notFound("skill", input.slug ?? input.skill_id!, "skill_list shows the skills you can use.");
    if (input.version === undefined || input.version === row.version) return { skill: toSkill(row, true) };
    const old = await findSkillVersion(ctx, row.id, input.version);
    if (!old) throw notFound("skill version", `${row.slug}@${input.version}`, `The skill is at version ${row.version}; versions 1 to ${row.version} can be read.`);
    return { skill: toSkill({ ...row, ...old }, true) };
  },
  summarize: (r) => `${r.skill.slug} v${r.skill.version}.`,
});
