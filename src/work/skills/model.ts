/** Skills (seed 001): the playbook shelf. Project-scoped skills shadow tenant-wide ones by slug. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { and, eq, exists, or, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, fromColumnNames, statementOf } from "../../db/client";
import { skills, skillVersions } from "../../db/schema";
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

/** Skills as the room's reads name them: `s`, which the shadowing subquery correlates with. */
const s = alias(skills, "s");

/** A skill row's fields, keyed by SQL column name so rows keep the shape the tools return. */
const skillFields = {
  id: s.id,
  slug: s.slug,
  name: s.name,
  description: s.description,
  project_id: s.projectId,
  tags: s.tags,
  status: s.status,
  version: s.version,
  content_hash: s.contentHash,
  body: s.body,
  updated_by: s.updatedBy,
  updated_at: s.updatedAt,
};

const selectSkill = (ctx: Ctx, where: SQL | undefined) => dbOf(ctx).select(skillFields).from(s).where(where).get() as Promise<SkillRow | undefined>;

export function toSkill(r: SkillRow, withBody: boolean): Skill {
  const { body, ...rest } = r;
  return { ...rest, project_id: r.project_id || null, tags: jsonArray<string>(r.tags), ...(withBody ? { body } : {}) };
}

/** The skill a slug means in a scope: the project's own first, else the tenant-wide one. */
export async function resolveSkill(ctx: Ctx, by: { slug?: string; id?: string }, projectId: string): Promise<SkillRow | null> {
  if (by.id) return (await selectSkill(ctx, and(eq(s.tenantId, ctx.tenantId), eq(s.id, by.id)))) ?? null;
  // `''` (tenant-wide) stays a literal, as the old hand SQL had it.
  const row = await dbOf(ctx)
    .select(skillFields)
    .from(s)
    .where(and(eq(s.tenantId, ctx.tenantId), eq(s.slug, by.slug!), sql`${s.projectId} IN (${projectId}, '')`))
    .orderBy(sql`${s.projectId} = ''`)
    .limit(1)
    .get();
  return (row as SkillRow | undefined) ?? null;
}

export const currentSkill = async (ctx: Ctx, projectId: string, slug: string): Promise<SkillRow | null> =>
  (await selectSkill(ctx, and(eq(s.tenantId, ctx.tenantId), eq(s.projectId, projectId), eq(s.slug, slug)))) ?? null;

/** Which skills skill_list reads, besides the caller's tenant. */
export interface SkillFilter {
  /** The project in scope, or "" for tenant-wide skills only. */
  projectId: string;
  status: string;
  /** Text the slug, name or description contains (ASCII case folded). */
  q?: string;
  tag?: string;
}

/** Skills that pass the filter, by slug. */
export async function listSkills(ctx: Ctx, f: SkillFilter, limit: number): Promise<SkillRow[]> {
  const p = alias(skills, "p");
  const shadowed = dbOf(ctx)
    .select({ one: sql`1` })
    .from(p)
    .where(and(eq(p.tenantId, s.tenantId), eq(p.projectId, f.projectId), eq(p.slug, s.slug), eq(p.status, s.status)));
  const where = and(
    eq(s.tenantId, ctx.tenantId),
    sql`${s.projectId} IN (${f.projectId}, '')`,
    eq(s.status, f.status),
    // Shadowing: a tenant-wide skill is hidden when the project has one with its slug.
    sql`NOT (${s.projectId} = '' AND ${f.projectId} <> '' AND ${exists(shadowed)})`,
    f.q ? or(...[s.slug, s.name, s.description].map((column) => sql`instr(lower(${column}), lower(${f.q})) > 0`)) : undefined,
    f.tag ? sql`EXISTS (SELECT 1 FROM json_each(${s.tags}) t WHERE t.value = ${f.tag})` : undefined,
  );
  return (await dbOf(ctx).select(skillFields).from(s).where(where).orderBy(s.slug).limit(limit).all()) as SkillRow[];
}

export type SkillVersionRow = Pick<SkillRow, "version" | "name" | "description" | "body" | "tags" | "status" | "content_hash" | "updated_by" | "updated_at">;

/** One earlier version of a skill, or null. */
export async function findSkillVersion(ctx: Ctx, skillId: string, version: number): Promise<SkillVersionRow | null> {
  const v = skillVersions;
  const row = await dbOf(ctx)
    .select({
      version: v.version,
      name: v.name,
      description: v.description,
      body: v.body,
      tags: v.tags,
      status: v.status,
      content_hash: v.contentHash,
      updated_by: v.updatedBy,
      updated_at: v.updatedAt,
    })
    .from(v)
    .where(and(eq(v.tenantId, ctx.tenantId), eq(v.skillId, skillId), eq(v.version, version)))
    .get();
  return (row as SkillVersionRow | undefined) ?? null;
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
  const { now, ...row } = k;
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .insert(skills)
      .values({ ...row, tenantId: ctx.tenantId, version: 1, createdBy: ctx.actorId, createdAt: now, updatedBy: ctx.actorId, updatedAt: now })
      .onConflictDoNothing()
      .returning({ id: skills.id }),
  );
}

/** Compare-and-swap on the version: writes `changes` (keyed by SQL column name) as the next version only while the skill is still at `version`. */
export function updateSkillStatement(ctx: Ctx, id: string, version: number, changes: Record<string, string>, columns: string[], now: string): D1PreparedStatement {
  const changed = fromColumnNames(skills, Object.fromEntries(columns.map((c) => [c, changes[c]])));
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(skills)
      .set({ ...changed, version: sql`${skills.version} + 1`, updatedBy: ctx.actorId, updatedAt: now })
      .where(and(eq(skills.id, id), eq(skills.version, version)))
      .returning({ id: skills.id }),
  );
}

export async function getSkill(ctx: Ctx, id: string): Promise<SkillRow | null> {
  return (await selectSkill(ctx, eq(s.id, id))) ?? null;
}
