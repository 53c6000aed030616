/** Skills (seed 001): the playbook shelf. Project-scoped skills shadow tenant-wide ones by slug. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { jsonArray } from "../shared";

export const SLUG = z
  .string()
  .max(64)
  .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, "slug is lower-case letters, digits and hyphens (max 64), e.g. release-checklist");
export const BODY_MAX = 64 * 1024;

export const skillSchema = z.object({
  id: z.string().describe("Skill id."),
  slug: z.string().describe("Stable identity (and on-disk directory name)."),
  name: z.string().describe("Display name."),
  description: z.string().describe("When to use it."),
  project_id: z.string().nullable().describe("The project it is scoped to, or null for tenant-wide."),
  tags: z.array(z.string()).describe("Tags."),
  status: z.enum(["active", "archived"]).describe("active or archived."),
  version: z.number().int().describe("Increments on every change."),
  content_hash: z.string().describe("SHA-256 of the body."),
  body: z.string().optional().describe("The markdown playbook (skill_get, or skill_list with include_body)."),
  updated_by: z.string().describe("Who changed it last."),
  updated_at: z.string().describe("When."),
});
export type Skill = z.infer<typeof skillSchema>;
export type SkillRow = Omit<Skill, "tags" | "project_id"> & { tags: string; project_id: string; body: string };
export const COLUMNS = "id, slug, name, description, project_id, tags, status, version, content_hash, body, updated_by, updated_at";

export function toSkill(r: SkillRow, withBody: boolean): Skill {
  const { body, ...rest } = r;
  return { ...rest, project_id: r.project_id || null, tags: jsonArray<string>(r.tags), ...(withBody ? { body } : {}) };
}

/** The skill a slug means in a scope: the project's own first, else the tenant-wide one. */
export async function resolveSkill(ctx: Ctx, by: { slug?: string; id?: string }, projectId: string): Promise<SkillRow | null> {
  if (by.id) return ctx.d1.prepare(`SELECT ${COLUMNS} FROM skills WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, by.id).first<SkillRow>();
  return ctx.d1
    .prepare(`SELECT ${COLUMNS} FROM skills WHERE tenant_id = ? AND slug = ? AND project_id IN (?, '') ORDER BY project_id = '' LIMIT 1`)
    .bind(ctx.tenantId, by.slug, projectId)
    .first<SkillRow>();
}

export const currentSkill = (ctx: Ctx, projectId: string, slug: string) =>
  ctx.d1.prepare(`SELECT ${COLUMNS} FROM skills WHERE tenant_id = ? AND project_id = ? AND slug = ?`).bind(ctx.tenantId, projectId, slug).first<SkillRow>();
