import { z } from "zod";
import { sha256Hex, uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { findProject } from "../projects/model";
import { BODY_MAX, currentSkill, getSkill, insertSkillStatement, type SkillRow, skillSchema, SLUG, toSkill, updateSkillStatement } from "./model";

/** True when the skill already holds every field value a write asked for: the write is already done. */
const holds = (row: SkillRow, wanted: Record<string, string | undefined>) => Object.entries(wanted).every(([k, v]) => v === undefined || (row as unknown as Record<string, unknown>)[k] === v);

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
  description:
    "Create or update a skill. The slug (with its project scope) is its identity; description and body are required on create. Every version is kept (skill_get with version reads an earlier one). expected_version makes an update fail with version_conflict if someone changed the skill since you read it; without it, a write that races another write to the same slug is refused with conflict. status: archived retires it.",
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
  output: z.object({
    skill: skillSchema.describe("The skill after the change (without body)."),
    created: z.boolean().describe("True when this call created it."),
    changed: z.boolean().describe("False when nothing differed."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const projectId = input.project_id ? (await findProject(ctx, input.project_id)).id : "";
    const existing = await currentSkill(ctx, projectId, input.slug);
    const now = iso(ctx.clock.now());
    if (!existing) {
      if (input.expected_version !== undefined)
        throw new ToolError("version_conflict", `Skill '${input.slug}' does not exist yet (expected version ${input.expected_version}).`, { hint: "Drop expected_version to create it." });
      if (!input.body || !input.description) throw invalidInput("Creating a skill needs body and description.", "Pass both, or fix the slug if you meant an existing skill.");
      const id = uuidv7();
      const [inserted] = await ctx.d1.batch<{ id: string }>([
        insertSkillStatement(ctx, {
          id,
          projectId,
          slug: input.slug,
          name: input.name ?? input.slug,
          description: input.description,
          body: input.body,
          tags: JSON.stringify(input.tags ?? []),
          status: input.status ?? "active",
          contentHash: await sha256Hex(input.body),
          now,
        }),
        activityStatement(ctx, { verb: "skill.created", objectType: "skill", objectId: id, projectId: projectId || null, summary: `created skill ${input.slug}`, ifPreviousChanged: true }),
      ]);
      if (inserted!.results.length === 0) {
        const winner = await currentSkill(ctx, projectId, input.slug);
        const wanted = { name: input.name ?? input.slug, description: input.description, body: input.body, tags: JSON.stringify(input.tags ?? []), status: input.status ?? "active" };
        if (winner && holds(winner, wanted)) return { skill: toSkill(winner, false), created: false, changed: false };
        throw racedSkill(input.slug, "was created by someone else while this call ran");
      }
      const row = await getSkill(ctx, id);
      return { skill: toSkill(row!, false), created: true, changed: true };
    }
    if (input.expected_version !== undefined && input.expected_version !== existing.version) {
      throw new ToolError("version_conflict", `Skill '${input.slug}' is at version ${existing.version}, not ${input.expected_version}.`, {
        hint: "Re-read it with skill_get, merge your change, and retry with the current version.",
      });
    }
    const next: Record<string, string> = {};
    if (input.body !== undefined) {
      next.body = input.body;
      next.content_hash = await sha256Hex(input.body);
    }
    if (input.description !== undefined) next.description = input.description;
    if (input.name !== undefined) next.name = input.name;
    if (input.tags !== undefined) next.tags = JSON.stringify(input.tags);
    if (input.status !== undefined) next.status = input.status;
    const columns = Object.keys(next).filter((k) => next[k] !== (existing as unknown as Record<string, unknown>)[k]);
    if (columns.length === 0) return { skill: toSkill(existing, false), created: false, changed: false };
    const [updated] = await ctx.d1.batch<{ id: string }>([
      updateSkillStatement(ctx, existing.id, existing.version, next, columns, now),
      activityStatement(ctx, {
        verb: next.status === "archived" ? "skill.archived" : "skill.updated",
        objectType: "skill",
        objectId: existing.id,
        projectId: projectId || null,
        summary: `${input.slug}: ${columns.filter((c) => c !== "content_hash").join(", ")}`,
        ifPreviousChanged: true,
      }),
    ]);
    if (updated!.results.length === 0) {
      const winner = await currentSkill(ctx, projectId, input.slug);
      if (winner && holds(winner, next)) return { skill: toSkill(winner, false), created: false, changed: false };
      // A caller that pinned the version it read is told so in the terms it used.
      if (input.expected_version !== undefined)
        throw new ToolError("version_conflict", `Skill '${input.slug}' moved past version ${input.expected_version} while this call ran; your change was not stored.`, {
          hint: "Re-read it with skill_get, merge your change, and retry with the current version.",
        });
      throw racedSkill(input.slug, "changed while this call ran");
    }
    const row = await getSkill(ctx, existing.id);
    return { skill: toSkill(row!, false), created: false, changed: true };
  },
  summarize: (r) => `${r.created ? "Created" : r.changed ? "Updated" : "Unchanged:"} ${r.skill.slug} v${r.skill.version}.`,
});
