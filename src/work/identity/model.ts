/** Identity and directory (seed 001): whoami, register_actor, actor_query. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { jsonArray } from "../shared";
import { notificationSchema } from "../collab/model";

export const ACTOR_KINDS = ["agent", "human", "service"] as const;

export const actorSchema = z.object({
  id: z.string().describe("Actor id."),
  external_ref: z.string().describe("Stable external reference (unique per tenant), e.g. claude-code."),
  kind: z.enum(ACTOR_KINDS).describe("agent, human or service."),
  display_name: z.string().describe("Human-readable name."),
  group: z.string().describe('Group or team, or "".'),
  role: z.string().describe('Role, or "".'),
  capabilities: z.array(z.string()).describe('What the actor can do, e.g. ["typescript", "review"].'),
  created_at: z.string().describe("When the actor was registered."),
  last_seen_at: z.string().describe('When it last called whoami, or "".'),
});
export type Actor = z.infer<typeof actorSchema>;

export interface ActorRow {
  id: string;
  name: string;
  kind: string;
  display_name: string;
  group_name: string;
  role: string;
  capabilities: string;
  created_at: string;
  last_seen_at: string | null;
  last_seen_activity_seq?: number;
}

export const ACTOR_COLUMNS = "id, name, kind, display_name, group_name, role, capabilities, created_at, last_seen_at, last_seen_activity_seq";

export function toActor(r: ActorRow): Actor {
  return {
    id: r.id,
    external_ref: r.name,
    kind: (ACTOR_KINDS as readonly string[]).includes(r.kind) ? (r.kind as Actor["kind"]) : "agent",
    display_name: r.display_name || r.name,
    group: r.group_name,
    role: r.role,
    capabilities: jsonArray<string>(r.capabilities),
    created_at: r.created_at,
    last_seen_at: r.last_seen_at ?? "",
  };
}

export const getActor = (ctx: Ctx, id: string) => ctx.d1.prepare(`SELECT ${ACTOR_COLUMNS} FROM actors WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, id);

export const recentDecisionSchema = z.object({
  id: z.string().describe("Decision id."),
  title: z.string().describe("Title."),
  status: z.string().describe("Status."),
  project_id: z.string().nullable().describe("Project, or null."),
  at: z.string().describe("When it was logged."),
});
export type RecentDecision = z.infer<typeof recentDecisionSchema>;

export const inboxItemSchema = z.object({
  id: z.string().describe("Handoff id."),
  kind: z.string().describe("handoff, question, review, collab or approval."),
  title: z.string().describe("Title."),
  status: z.string().describe("Status."),
  from_actor_id: z.string().describe("Who asked."),
  created_at: z.string().describe("When."),
});
export type InboxItem = z.infer<typeof inboxItemSchema>;

export const unreadSchema = notificationSchema.omit({ read_at: true });
export type Unread = z.infer<typeof unreadSchema>;

export const UNREAD_COLUMNS = "id, kind, object_type, object_id, summary, from_actor_id, created_at";
