import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { ACTOR_KINDS, actorByNameStatement, type ActorRow, actorSchema, insertActorStatement, toActor, updateActorStatement } from "./model";

const textField = (max: number, description: string) => z.string().max(max).optional().describe(description);

export const registerActorTool = defineTool({
  name: "register_actor",
  title: "Register an actor",
  toolset: "identity",
  description: "Register an agent, human or service, idempotent by external_ref.",
  input: z.object({
    external_ref: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^\s\p{Cc}]+$/u, "external_ref must not contain spaces or control characters")
      .describe("Stable unique reference (claude-code, alice@example.com)."),
    kind: z.enum(ACTOR_KINDS).optional().describe("agent (default), human or service."),
    display_name: textField(200, "Human-readable name; defaults to external_ref."),
    group: textField(100, "Group or team."),
    role: textField(100, "Role, e.g. reviewer."),
    capabilities: z.array(z.string().min(1).max(100)).max(50).optional().describe("What the actor can do."),
    update: z.boolean().optional().describe("Replace an existing actor's differing fields."),
  }),
  output: z.object({
    actor: actorSchema.describe("The registered actor."),
    created: z.boolean().describe("True when this call created it; false when it already existed."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const now = iso(ctx.clock.now());
    const id = uuidv7();
    // Insert-or-nothing on the unique (tenant, external_ref) index: racing calls converge.
    const [inserted, , registered] = await ctx.d1.batch<ActorRow>([
      insertActorStatement(ctx, {
        id,
        name: input.external_ref,
        kind: input.kind ?? "agent",
        displayName: input.display_name ?? input.external_ref,
        group: input.group ?? "",
        role: input.role ?? "",
        capabilities: JSON.stringify(input.capabilities ?? []),
        now,
      }),
      activityStatement(ctx, { verb: "actor.registered", objectType: "actor", objectId: id, summary: `registered ${input.kind ?? "agent"} ${input.external_ref}`, ifPreviousChanged: true }),
      actorByNameStatement(ctx, input.external_ref),
    ]);
    if (inserted!.results.length > 0) return { actor: toActor(registered!.results[0]!), created: true };
    const existing = registered!.results[0]!;
    const patch: Array<[keyof ActorRow, string | undefined]> = [
      ["kind", input.kind],
      ["display_name", input.display_name],
      ["group_name", input.group],
      ["role", input.role],
      ["capabilities", input.capabilities && JSON.stringify(input.capabilities)],
    ];
    // Only fields that differ: a repeated re-registration writes nothing.
    const differing = patch.filter(([column, value]) => value !== undefined && value !== existing[column]) as Array<[keyof ActorRow, string]>;
    if (differing.length === 0) return { actor: toActor(existing), created: false };
    const names = differing.map(([c]) => (c === "group_name" ? "group" : c)).join(", ");
    // Another caller may have registered this actor a moment ago: replacing its fields unasked would
    // acknowledge its registration and then lose it.
    if (!input.update) {
      throw new ToolError("conflict", `Actor '${input.external_ref}' is already registered with a different ${names}; nothing was changed.`, {
        hint: "Omit those fields to resolve the actor as it is (actor_query shows it), or pass update: true to replace them.",
      });
    }
    // Compare-and-swap on the values read, so two racing updates cannot both be acknowledged.
    const [updated, , after] = await ctx.d1.batch<ActorRow>([
      updateActorStatement(ctx, input.external_ref, differing, existing, now),
      activityStatement(ctx, {
        verb: "actor.updated",
        objectType: "actor",
        objectId: existing.id,
        summary: `updated ${input.external_ref}`,
        metadata: { changed: differing.map(([c]) => c), previous: Object.fromEntries(differing.map(([c]) => [c, existing[c]])) },
        ifPreviousChanged: true,
      }),
      actorByNameStatement(ctx, input.external_ref),
    ]);
    const current = after!.results[0]!;
    if (updated!.results.length === 0 && !differing.every(([c, v]) => current[c] === v)) {
      throw new ToolError("conflict", `Actor '${input.external_ref}' was changed by another call while this one ran; nothing was changed.`, {
        hint: "Re-read it with actor_query; to replace what it holds now, retry with update: true.",
      });
    }
    return { actor: toActor(current), created: false };
  },
  summarize: (r) => `${r.created ? "Registered" : "Resolved"} ${r.actor.external_ref} (${r.actor.id}).`,
});
