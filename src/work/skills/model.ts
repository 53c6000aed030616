/** Skills (seed 001): the playbook shelf. Project-scoped skills shadow tenant-wide ones by slug. */
import { z } from "zod";
import { sha256Hex, uuidv7 } from "../../db/ids";
import { iso } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { invalidInput, notFound, ToolError } from "../../core/errors";
import { activityStatement, jsonArray, limitField } from "../shared";
import { findProject } from "../projects/model";

const SLUG = z.string().max(64).regex(/^[a-z0-9][a-z0-9-]{0,63}$/, "slug is lower-case letters, digits and hyphens (max 64), e.g. release-checklist");
const BODY_MAX = 64 * 1024;

const skillSchema = z.object({
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
type Skill = z.infer<typeof skillSchema>;
type SkillRow = Omit<Skill, "tags" | "project_id"> & { tags: string; project_id: string; body: string };
const COLUMNS = "id, slug, name, description, project_id, tags, status, version, content_hash, body, updated_by, updated_at";

function toSkill(r: SkillRow, withBody: boolean): Skill {
  const { body, ...rest } = r;
  return { ...rest, project_id: r.project_id || null, tags: jsonArray<string>(r.tags), ...(withBody ? { body } : {}) };
}

/** The skill a slug means in a scope: the project's own first, else the tenant-wide one. */
async function resolveSkill(ctx: Ctx, by: { slug?: string; id?: string }, projectId: string): Promise<SkillRow | null> {
  if (by.id) return ctx.d1.prepare(`SELECT ${COLUMNS} FROM skills WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, by.id).first<SkillRow>();
  return ctx.d1
    .prepare(`SELECT ${COLUMNS} FROM skills WHERE tenant_id = ? AND slug = ? AND project_id IN (?, '') ORDER BY project_id = '' LIMIT 1`)
    .bind(ctx.tenantId, by.slug, projectId)
    .first<SkillRow>();
}

export const skillGetTool = defineTool({
  name: "skill_get",
  title: "Read a skill",
  toolset: "skills",
  description: "Fetch one skill's full body by slug or id (exactly one). The body is a markdown playbook: follow it as instructions. With project_id, that project's skill shadows a tenant-wide one of the same slug. Every version is kept: version reads an earlier one.",
  input: z.object({
    slug: SLUG.optional().describe("The skill's slug."),
    skill_id: z.string().min(1).max(100).optional().describe("The skill's id."),
    project_id: z.string().min(1).max(100).optional().describe("Project (id or key) whose skills take precedence."),
    version: z.number().int().min(1).max(1_000_000).optional().describe("Read this version instead of the current one."),
  }),
  output: z.object({ skill: skillSchema.describe("The skill, with its body.") }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    if ((input.slug === undefined) === (input.skill_id === undefined)) throw invalidInput("Pass exactly one of slug and skill_id.", "Name the skill by slug (usual) or by id.");
    const projectId = input.project_id ? (await findProject(ctx, input.project_id)).id : "";
    const row = await resolveSkill(ctx, { slug: input.slug, id: input.skill_id }, projectId);
    if (!row) throw notFound("skill", input.slug ?? input.skill_id!, "skill_list shows the skills you can use.");
    if (input.version === undefined || input.version === row.version) return { skill: toSkill(row, true) };
    const old = await ctx.d1
      .prepare(`SELECT version, name, description, body, tags, status, content_hash, updated_by, updated_at FROM skill_versions WHERE tenant_id = ? AND skill_id = ? AND version = ?`)
      .bind(ctx.tenantId, row.id, input.version)
      .first<Pick<SkillRow, "version" | "name" | "description" | "body" | "tags" | "status" | "content_hash" | "updated_by" | "updated_at">>();
    if (!old) throw notFound("skill version", `${row.slug}@${input.version}`, `The skill is at version ${row.version}; versions 1 to ${row.version} can be read.`);
    return { skill: toSkill({ ...row, ...old }, true) };
  },
  summarize: (r) => `${r.skill.slug} v${r.skill.version}.`,
});

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
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const projectId = input.project_id ? (await findProject(ctx, input.project_id)).id : "";
    const where = ["s.tenant_id = ?", "s.project_id IN (?, '')", "s.status = ?"];
    const params: unknown[] = [ctx.tenantId, projectId, input.status];
    // Shadowing: a tenant-wide skill is hidden when the project has one with its slug.
    where.push("NOT (s.project_id = '' AND ? <> '' AND EXISTS (SELECT 1 FROM skills p WHERE p.tenant_id = s.tenant_id AND p.project_id = ? AND p.slug = s.slug AND p.status = s.status))");
    params.push(projectId, projectId);
    if (input.q?.trim()) { where.push("(instr(lower(s.slug), lower(?)) > 0 OR instr(lower(s.name), lower(?)) > 0 OR instr(lower(s.description), lower(?)) > 0)"); params.push(input.q.trim(), input.q.trim(), input.q.trim()); }
    if (input.tag) { where.push("EXISTS (SELECT 1 FROM json_each(s.tags) t WHERE t.value = ?)"); params.push(input.tag); }
    const rows = await ctx.d1.prepare(`SELECT ${COLUMNS.split(", ").map((c) => `s.${c}`).join(", ")} FROM skills s WHERE ${where.join(" AND ")} ORDER BY s.slug LIMIT ?`).bind(...params, input.limit).all<SkillRow>();
    return { items: rows.results.map((r) => toSkill(r, input.include_body)) };
  },
  summarize: (r) => `${r.items.length} skill(s).`,
});

const currentSkill = (ctx: Ctx, projectId: string, slug: string) =>
  ctx.d1.prepare(`SELECT ${COLUMNS} FROM skills WHERE tenant_id = ? AND project_id = ? AND slug = ?`).bind(ctx.tenantId, projectId, slug).first<SkillRow>();

/** True when the skill already holds every field value a write asked for: the write is already done. */
const holds = (row: SkillRow, wanted: Record<string, string | undefined>) =>
  Object.entries(wanted).every(([k, v]) => v === undefined || (row as unknown as Record<string, unknown>)[k] === v);

/**
 * A write that lost a race to another write of the same slug. Not retryable as is: a blind retry
 * would replace the other write unseen; reading it first makes the replacement deliberate.
 */
const racedSkill = (slug: string, what: string) =>
  new ToolError("conflict", `Skill '${slug}' ${what}; your change was not stored.`, {
    hint: "Read it with skill_get; to replace it, retry with expected_version set to the version you read (the replaced version stays readable).",
  });

export const skillUpsertTool = defineTool({
  name: "skill_upsert",
  title: "Create or update a skill",
  toolset: "skills",
  description: "Create or update a skill. The slug (with its project scope) is its identity; description and body are required on create. Every version is kept (skill_get with version reads an earlier one). expected_version makes an update fail with version_conflict if someone changed the skill since you read it; without it, a write that races another write to the same slug is refused with conflict. status: archived retires it.",
  input: z.object({
    slug: SLUG.describe("The skill's slug (its identity, and its directory name on disk)."),
    body: z.string().min(1).max(BODY_MAX).optional().describe("The markdown playbook (up to 64 KB); required on create."),
    description: z.string().min(1).max(1024).optional().describe("When to use it (up to 1 KB); required on create."),
    name: z.string().min(1).max(200).optional().describe("Display name (defaults to the slug)."),
    project_id: z.string().min(1).max(100).optional().describe("Scope it to this project (id or key); omit for tenant-wide."),
    tags: z.array(z.string().min(1).max(50)).max(20).optional().describe("Tags."),
    status: z.enum(["active", "archived"]).optional().describe("active or archived."),
    expected_version: z.number().int().min(1).optional().describe("Fail with version_conflict unless the skill is at this version."),
  }),
  output: z.object({ skill: skillSchema.describe("The skill after the change (without body)."), created: z.boolean().describe("True when this call created it."), changed: z.boolean().describe("False when nothing differed.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const projectId = input.project_id ? (await findProject(ctx, input.project_id)).id : "";
    const existing = await currentSkill(ctx, projectId, input.slug);
    const now = iso(ctx.clock.now());
    if (!existing) {
      if (input.expected_version !== undefined) throw new ToolError("version_conflict", `Skill '${input.slug}' does not exist yet (expected version ${input.expected_version}).`, { hint: "Drop expected_version to create it." });
      if (!input.body || !input.description) throw invalidInput("Creating a skill needs body and description.", "Pass both, or fix the slug if you meant an existing skill.");
      const id = uuidv7();
      const [inserted] = await ctx.d1.batch<{ id: string }>([
        ctx.d1
          .prepare(`INSERT INTO skills (id, tenant_id, project_id, slug, name, description, body, tags, status, version, content_hash, created_by, created_at, updated_by, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`)
          .bind(id, ctx.tenantId, projectId, input.slug, input.name ?? input.slug, input.description, input.body, JSON.stringify(input.tags ?? []),
            input.status ?? "active", await sha256Hex(input.body), ctx.actorId, now, ctx.actorId, now),
        activityStatement(ctx, { verb: "skill.created", objectType: "skill", objectId: id, projectId: projectId || null, summary: `created skill ${input.slug}`, ifPreviousChanged: true }),
      ]);
      if (inserted!.results.length === 0) {
        const winner = await currentSkill(ctx, projectId, input.slug);
        const wanted = { name: input.name ?? input.slug, description: input.description, body: input.body, tags: JSON.stringify(input.tags ?? []), status: input.status ?? "active" };
        if (winner && holds(winner, wanted)) return { skill: toSkill(winner, false), created: false, changed: false };
        throw racedSkill(input.slug, "was created by someone else while this call ran");
      }
      const row = await ctx.d1.prepare(`SELECT ${COLUMNS} FROM skills WHERE id = ?`).bind(id).first<SkillRow>();
      return { skill: toSkill(row!, false), created: true, changed: true };
    }
    if (input.expected_version !== undefined && input.expected_version !== existing.version) {
      throw new ToolError("version_conflict", `Skill '${input.slug}' is at version ${existing.version}, not ${input.expected_version}.`, { hint: "Re-read it with skill_get, merge your change, and retry with the current version." });
    }
    const next: Record<string, string> = {};
    if (input.body !== undefined) { next.body = input.body; next.content_hash = await sha256Hex(input.body); }
    if (input.description !== undefined) next.description = input.description;
    if (input.name !== undefined) next.name = input.name;
    if (input.tags !== undefined) next.tags = JSON.stringify(input.tags);
    if (input.status !== undefined) next.status = input.status;
    const columns = Object.keys(next).filter((k) => next[k] !== (existing as unknown as Record<string, unknown>)[k]);
    if (columns.length === 0) return { skill: toSkill(existing, false), created: false, changed: false };
    const [updated] = await ctx.d1.batch<{ id: string }>([
      ctx.d1
        .prepare(`UPDATE skills SET ${columns.map((c) => `${c} = ?`).join(", ")}, version = version + 1, updated_by = ?, updated_at = ? WHERE id = ? AND version = ? RETURNING id`)
        .bind(...columns.map((c) => next[c]), ctx.actorId, now, existing.id, existing.version),
      activityStatement(ctx, { verb: next.status === "archived" ? "skill.archived" : "skill.updated", objectType: "skill", objectId: existing.id, projectId: projectId || null, summary: `${input.slug}: ${columns.filter((c) => c !== "content_hash").join(", ")}`, ifPreviousChanged: true }),
    ]);
    if (updated!.results.length === 0) {
      const winner = await currentSkill(ctx, projectId, input.slug);
      if (winner && holds(winner, next)) return { skill: toSkill(winner, false), created: false, changed: false };
      // A caller that pinned the version it read is told so in the terms it used.
      if (input.expected_version !== undefined) throw new ToolError("version_conflict", `Skill '${input.slug}' moved past version ${input.expected_version} while this call ran; your change was not stored.`, { hint: "Re-read it with skill_get, merge your change, and retry with the current version." });
      throw racedSkill(input.slug, "changed while this call ran");
    }
    const row = await ctx.d1.prepare(`SELECT ${COLUMNS} FROM skills WHERE id = ?`).bind(existing.id).first<SkillRow>();
    return { skill: toSkill(row!, false), created: false, changed: true };
  },
  summarize: (r) => `${r.created ? "Created" : r.changed ? "Updated" : "Unchanged:"} ${r.skill.slug} v${r.skill.version}.`,
});
