/**
 * drizzle table definitions mirroring migrations/ (the SQL there is the source of truth;
 * FTS5 tables and triggers exist only in SQL because drizzle cannot describe them).
 */
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const tenants = sqliteTable("tenants", {
  id: text("id").primaryKey(),
  slug: text("slug").notNull(),
  name: text("name").notNull(),
  createdAt: text("created_at").notNull(),
});

export const actors = sqliteTable("actors", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  name: text("name").notNull(),
  kind: text("kind").notNull(),
  displayName: text("display_name").notNull(),
  createdAt: text("created_at").notNull(),
  lastSeenAt: text("last_seen_at"),
});

export const apiKeys = sqliteTable("api_keys", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  actorId: text("actor_id").notNull(),
  keyHash: text("key_hash").notNull(),
  prefix: text("prefix").notNull(),
  label: text("label").notNull(),
  createdAt: text("created_at").notNull(),
  revokedAt: text("revoked_at"),
});

export const idempotencyKeys = sqliteTable("idempotency_keys", {
  tenantId: text("tenant_id").notNull(),
  actorId: text("actor_id").notNull(),
  tool: text("tool").notNull(),
  key: text("key").notNull(),
  requestHash: text("request_hash").notNull(),
  status: text("status").notNull(),
  result: text("result"),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
});

export const events = sqliteTable("events", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  timestamp: text("timestamp").notNull(),
  entityType: text("entity_type").notNull(),
  entityPath: text("entity_path").notNull(),
  changeType: text("change_type").notNull(),
  diff: text("diff").notNull(),
  reasoning: text("reasoning").notNull(),
  agent: text("agent").notNull(),
  actorId: text("actor_id").notNull(),
  sessionId: text("session_id").notNull(),
  gitCommit: text("git_commit").notNull(),
  project: text("project").notNull(),
  changesetId: text("changeset_id").notNull(),
  metadata: text("metadata").notNull(),
  revisitAfter: text("revisit_after").notNull(),
  revisitDue: text("revisit_due").notNull(),
  expiresWhen: text("expires_when").notNull(),
  staleWhen: text("stale_when").notNull(),
  supersedes: text("supersedes").notNull(),
});

export const toolCalls = sqliteTable("tool_calls", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  tenantId: text("tenant_id").notNull(),
  timestamp: text("timestamp").notNull(),
  toolName: text("tool_name").notNull(),
  entityPath: text("entity_path").notNull(),
  success: integer("success").notNull(),
  errorMsg: text("error_msg").notNull(),
  actorId: text("actor_id").notNull(),
});

export type EventRow = typeof events.$inferSelect;
