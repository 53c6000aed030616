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

/** Skills that pass the filter (`where` over alias s), by slug. */
export async function listSkills(ctx: Ctx, where: string[], params: unknown[], limit: number): Promise<SkillRow[]> {
  return (
    await ctx.d1
      .prepare(
        `SELECT ${COLUMNS.split(", ")
          .map((c) => `s.${c}`)
          .join(", ")} FROM skills s WHERE ${where.join(" AND ")} ORDER BY s.slug LIMIT ?`,
      )
      .bind(...params, limit)
      .all<SkillRow>()
  ).results;
}

export type SkillVersionRow = Pick<SkillRow, "version" | "name" | "description" | "body" | "tags" | "status" | "content_hash" | "updated_by" | "updated_at">;

/** One earlier version of a skill, or null. */
export async function findSkillVersion(ctx: Ctx, skillId: string, version: number): Promise<SkillVersionRow | null> {
  return ctx.d1
    .prepare(`SELECT version, name, description, body, tags, status, content_hash, updated_by, updated_at FROM skill_versions WHERE tenant_id = ? AND skill_id = ? AND version = ?`)
    .bind(ctx.tenantId, skillId, version)
    .first<SkillVersionRow>();
}

export interface SkillInsert {
  id: string;
  projectId: string;
  slug: string;
  name: string;
  description: string;
  body: string;
  tags: string;
  status: string;
  contentHash: string;
  now: string;
}

/** A new skill at version 1; returns its id, or nothing when the slug is taken. */
export function insertSkillStatement(ctx: Ctx, k: SkillInsert): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `INSERT INTO skills (id, tenant_id, project_id, slug, name, description, body, tags, status, version, content_hash, created_by, created_at, updated_by, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
    )
    .bind(k.id, ctx.tenantId, k.projectId, k.slug, k.name, k.description, k.body, k.tags, k.status, k.contentHash, ctx.actorId, k.now, ctx.actorId, k.now);
}

/** Compare-and-swap on the version: writes `changes` as the next version only while the skill is still at `version`. */
export function updateSkillStatement(ctx: Ctx, id: string, version: number, changes: Record<string, string>, columns: string[], now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(`UPDATE skills SET ${columns.map((c) => `${c} = ?`).join(", ")}, version = version + 1, updated_by = ?, updated_at = ? WHERE id = ? AND version = ? RETURNING id`)
    .bind(...columns.map((c) => changes[c]), ctx.actorId, now, id, version);
}

export async function getSkill(ctx: Ctx, id: string): Promise<SkillRow | null> {
  return ctx.d1.prepare(`SELECT ${COLUMNS} FROM skills WHERE id = ?`).bind(id).first<SkillRow>();
}
