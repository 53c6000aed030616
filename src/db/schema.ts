/**
 * drizzle table definitions mirroring migrations/ (the SQL there is the source of truth;
 * FTS5 tables and triggers exist only in SQL because drizzle cannot describe them).
 */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

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
  groupName: text("group_name").notNull(),
  role: text("role").notNull(),
  capabilities: text("capabilities").notNull(),
  updatedAt: text("updated_at"),
  lastSeenActivitySeq: integer("last_seen_activity_seq").notNull(),
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
  role: text("role").notNull(),
});

/** Per-tenant overrides of the request rate limits; NULL keeps the Worker's default, 0 is off. */
export const tenantRateLimits = sqliteTable("tenant_rate_limits", {
  tenantId: text("tenant_id").primaryKey(),
  keyPerMin: integer("key_per_min"),
  tenantPerMin: integer("tenant_per_min"),
  updatedAt: text("updated_at").notNull(),
});

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    tenantId: text("tenant_id").notNull(),
    actorId: text("actor_id").notNull(),
    tool: text("tool").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    status: text("status").notNull(),
    result: text("result"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    run: text("run").notNull().default(""),
    activityFrom: integer("activity_from").notNull().default(0),
    activityTo: integer("activity_to").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.actorId, t.tool, t.key] })],
);

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
  constraint: text("constraint").notNull(),
  /** The importer's stable id for an imported event (unique per tenant, migrations/0050); null when logged live. */
  importKey: text("import_key"),
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
export type NewEvent = Omit<typeof events.$inferInsert, "seq">;

/** The per-tenant hash chain over events and decisions (migrations/0037, src/changes/chain.ts). */
export const ledgerChain = sqliteTable(
  "ledger_chain",
  {
    tenantId: text("tenant_id").notNull(),
    pos: integer("pos").notNull(),
    kind: text("kind").notNull(),
    rowId: text("row_id").notNull(),
    hash: text("hash").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.pos] })],
);

/** The last event and decision written before the chain existed (the sweep chains those later). */
export const ledgerChainStart = sqliteTable("ledger_chain_start", {
  id: integer("id").primaryKey(),
  eventsSeq: integer("events_seq").notNull(),
  decisionsSeq: integer("decisions_seq").notNull(),
});

export const projects = sqliteTable("projects", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  key: text("key").notNull(),
  title: text("title").notNull(),
  summary: text("summary").notNull(),
  description: text("description").notNull(),
  status: text("status").notNull(),
  parentProjectId: text("parent_project_id"),
  ownerActorId: text("owner_actor_id"),
  startOn: text("start_on"),
  targetOn: text("target_on"),
  createdBy: text("created_by").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  deletedAt: text("deleted_at"),
  taskSeq: integer("task_seq").notNull(),
});

export const tasks = sqliteTable("tasks", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  projectId: text("project_id").notNull(),
  seq: integer("seq").notNull(),
  title: text("title").notNull(),
  body: text("body").notNull(),
  status: text("status").notNull(),
  priority: integer("priority").notNull(),
  assigneeActorId: text("assignee_actor_id"),
  reviewerActorId: text("reviewer_actor_id"),
  dueOn: text("due_on"),
  parentTaskId: text("parent_task_id"),
  labels: text("labels").notNull(),
  acceptanceCriteria: text("acceptance_criteria").notNull(),
  requiresEvidence: integer("requires_evidence").notNull(),
  leaseExpiresAt: text("lease_expires_at"),
  claimedAt: text("claimed_at"),
  createdBy: text("created_by").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  doneAt: text("done_at"),
  leaseToken: integer("lease_token").notNull(),
});

export const taskDeps = sqliteTable(
  "task_deps",
  {
    tenantId: text("tenant_id").notNull(),
    taskId: text("task_id").notNull(),
    dependsOnTaskId: text("depends_on_task_id").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.taskId, t.dependsOnTaskId] })],
);

/** Each (task, label) pair with the task's status and place in the claim order; kept by triggers on tasks (migration 0056). */
export const taskLabels = sqliteTable(
  "task_labels",
  {
    tenantId: text("tenant_id").notNull(),
    projectId: text("project_id").notNull(),
    label: text("label").notNull(),
    status: text("status").notNull(),
    priority: integer("priority").notNull(),
    createdAt: text("created_at").notNull(),
    taskId: text("task_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.label] })],
);

export const activity = sqliteTable("activity", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  at: text("at").notNull(),
  actorId: text("actor_id").notNull(),
  verb: text("verb").notNull(),
  objectType: text("object_type").notNull(),
  objectId: text("object_id").notNull(),
  projectId: text("project_id"),
  summary: text("summary").notNull(),
  severity: text("severity").notNull(),
  sessionId: text("session_id").notNull(),
  metadata: text("metadata").notNull(),
  contentHash: text("content_hash"),
  runId: text("run_id"),
});

export const handoffs = sqliteTable("handoffs", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  kind: text("kind").notNull(),
  title: text("title").notNull(),
  body: text("body").notNull(),
  fromActorId: text("from_actor_id").notNull(),
  status: text("status").notNull(),
  claimedBy: text("claimed_by"),
  response: text("response"),
  respondedBy: text("responded_by"),
  respondedAt: text("responded_at"),
  resolution: text("resolution"),
  relatedTaskId: text("related_task_id"),
  relatedProjectId: text("related_project_id"),
  fingerprint: text("fingerprint"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  options: text("options").notNull(),
  allowFreeText: integer("allow_free_text").notNull(),
  dueAt: text("due_at"),
  resolvedAt: text("resolved_at"),
  resolutionNote: text("resolution_note").notNull(),
  verdict: text("verdict"),
});

export const handoffRecipients = sqliteTable(
  "handoff_recipients",
  {
    tenantId: text("tenant_id").notNull(),
    handoffId: text("handoff_id").notNull(),
    actorId: text("actor_id").notNull(),
    ackedAt: text("acked_at"),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.handoffId, t.actorId] })],
);

export const codeRefs = sqliteTable("code_refs", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  objectType: text("object_type").notNull(),
  objectId: text("object_id").notNull(),
  refType: text("ref_type").notNull(),
  repositoryId: text("repository_id"),
  sha: text("sha"),
  branch: text("branch"),
  prNumber: integer("pr_number"),
  prUrl: text("pr_url"),
  prState: text("pr_state"),
  title: text("title").notNull(),
  url: text("url"),
  createdBy: text("created_by").notNull(),
  createdAt: text("created_at").notNull(),
  deletedAt: text("deleted_at"),
  runId: text("run_id"),
});

export const attachments = sqliteTable("attachments", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  objectType: text("object_type").notNull(),
  objectId: text("object_id").notNull(),
  kind: text("kind").notNull(),
  url: text("url"),
  storagePath: text("storage_path"),
  title: text("title").notNull(),
  filename: text("filename"),
  mimeType: text("mime_type"),
  sizeBytes: integer("size_bytes"),
  createdBy: text("created_by").notNull(),
  createdAt: text("created_at").notNull(),
  deletedAt: text("deleted_at"),
  blobVersion: integer("blob_version"),
});

export const blobVersions = sqliteTable(
  "blob_versions",
  {
    tenantId: text("tenant_id").notNull(),
    storagePath: text("storage_path").notNull(),
    version: integer("version").notNull(),
    objectKey: text("object_key").notNull(),
    sha256: text("sha256"),
    sizeBytes: integer("size_bytes").notNull(),
    mimeType: text("mime_type").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.storagePath, t.version] })],
);

export const repositories = sqliteTable("repositories", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  host: text("host").notNull(),
  owner: text("owner").notNull(),
  name: text("name").notNull(),
  slug: text("slug").notNull(),
  remoteUrl: text("remote_url").notNull(),
  defaultBranch: text("default_branch").notNull(),
  createdBy: text("created_by").notNull(),
  createdAt: text("created_at").notNull(),
});

export const projectRepositories = sqliteTable(
  "project_repositories",
  {
    tenantId: text("tenant_id").notNull(),
    projectId: text("project_id").notNull(),
    repositoryId: text("repository_id").notNull(),
    role: text("role").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.projectId, t.repositoryId] })],
);

export const decisions = sqliteTable("decisions", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  projectId: text("project_id"),
  title: text("title").notNull(),
  choice: text("choice").notNull(),
  context: text("context").notNull(),
  rationale: text("rationale").notNull(),
  options: text("options").notNull(),
  status: text("status").notNull(),
  supersedesDecisionId: text("supersedes_decision_id"),
  createdBy: text("created_by").notNull(),
  createdAt: text("created_at").notNull(),
  statusChangedAt: text("status_changed_at").notNull(),
});

export const comments = sqliteTable("comments", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  objectType: text("object_type").notNull(),
  objectId: text("object_id").notNull(),
  body: text("body").notNull(),
  authorActorId: text("author_actor_id").notNull(),
  parentCommentId: text("parent_comment_id"),
  mentions: text("mentions").notNull(),
  createdAt: text("created_at").notNull(),
});

export const notifications = sqliteTable("notifications", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  actorId: text("actor_id").notNull(),
  kind: text("kind").notNull(),
  objectType: text("object_type").notNull(),
  objectId: text("object_id").notNull(),
  summary: text("summary").notNull(),
  fromActorId: text("from_actor_id").notNull(),
  createdAt: text("created_at").notNull(),
  readAt: text("read_at"),
  /** Set by jobs that may run twice: one notice per recipient and key. */
  dedupeKey: text("dedupe_key"),
});

export const featureRequests = sqliteTable("feature_requests", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  actorId: text("actor_id").notNull(),
  title: text("title").notNull(),
  body: text("body").notNull(),
  kind: text("kind").notNull(),
  severity: text("severity").notNull(),
  toolName: text("tool_name").notNull(),
  errorCode: text("error_code").notNull(),
  context: text("context").notNull(),
  fingerprint: text("fingerprint"),
  status: text("status").notNull(),
  resolutionNote: text("resolution_note").notNull(),
  occurrences: integer("occurrences").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const featureRequestEvents = sqliteTable("feature_request_events", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  requestId: text("request_id").notNull(),
  fromStatus: text("from_status").notNull(),
  toStatus: text("to_status").notNull(),
  note: text("note").notNull(),
  actorId: text("actor_id").notNull(),
  at: text("at").notNull(),
});

export const skills = sqliteTable("skills", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  projectId: text("project_id").notNull(),
  slug: text("slug").notNull(),
  name: text("name").notNull(),
  description: text("description").notNull(),
  body: text("body").notNull(),
  tags: text("tags").notNull(),
  status: text("status").notNull(),
  version: integer("version").notNull(),
  contentHash: text("content_hash").notNull(),
  createdBy: text("created_by").notNull(),
  createdAt: text("created_at").notNull(),
  updatedBy: text("updated_by").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const skillVersions = sqliteTable(
  "skill_versions",
  {
    tenantId: text("tenant_id").notNull(),
    skillId: text("skill_id").notNull(),
    version: integer("version").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull(),
    body: text("body").notNull(),
    tags: text("tags").notNull(),
    status: text("status").notNull(),
    contentHash: text("content_hash").notNull(),
    updatedBy: text("updated_by").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.skillId, t.version] })],
);

export const knowledgeNotes = sqliteTable("knowledge_notes", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  projectId: text("project_id"),
  kind: text("kind").notNull(),
  title: text("title").notNull(),
  body: text("body").notNull(),
  tags: text("tags").notNull(),
  version: integer("version").notNull(),
  createdBy: text("created_by").notNull(),
  createdAt: text("created_at").notNull(),
  updatedBy: text("updated_by").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const embeddings = sqliteTable(
  "embeddings",
  {
    tenantId: text("tenant_id").notNull(),
    objectType: text("object_type").notNull(),
    objectId: text("object_id").notNull(),
    contentHash: text("content_hash").notNull(),
    status: text("status").notNull(),
    model: text("model").notNull(),
    attempts: integer("attempts").notNull(),
    lastError: text("last_error").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.objectType, t.objectId] })],
);

export const localVectors = sqliteTable(
  "local_vectors",
  {
    namespace: text("namespace").notNull(),
    id: text("id").notNull(),
    vector: text("vector").notNull(),
    metadata: text("metadata").notNull(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.id] })],
);

/** What the global search indexes (search_fts, search_fts_trgm): kept by triggers, never written by code. */
export const searchDocs = sqliteTable("search_docs", {
  seq: integer("seq").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  objectType: text("object_type").notNull(),
  objectId: text("object_id").notNull(),
  projectId: text("project_id"),
  title: text("title").notNull(),
  body: text("body").notNull(),
});

export const runs = sqliteTable("runs", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  runKey: text("run_key").notNull(),
  actorId: text("actor_id").notNull(),
  parentRunId: text("parent_run_id"),
  rootRunId: text("root_run_id").notNull(),
  kind: text("kind").notNull(),
  status: text("status").notNull(),
  label: text("label").notNull(),
  goal: text("goal").notNull(),
  agentRole: text("agent_role").notNull(),
  runSeriesKey: text("run_series_key"),
  sessionId: text("session_id").notNull(),
  headSha: text("head_sha"),
  branch: text("branch"),
  dirty: integer("dirty"),
  repositoryId: text("repository_id"),
  counts: text("counts").notNull(),
  startedAt: text("started_at").notNull(),
  lastHeartbeatAt: text("last_heartbeat_at").notNull(),
  endedAt: text("ended_at"),
});

export const githubCredentials = sqliteTable("github_credentials", {
  tenantId: text("tenant_id").primaryKey(),
  kind: text("kind").notNull(),
  secret: text("secret").notNull(),
  installationId: text("installation_id").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const gitPresets = sqliteTable(
  "git_presets",
  {
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    nestedRoots: text("nested_roots").notNull(),
    parityPairs: text("parity_pairs").notNull(),
    workspaceRootHint: text("workspace_root_hint").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.name] })],
);

/** Where a bounded scheduled job stopped, so its next run continues there. */
export const cronCursors = sqliteTable("cron_cursors", {
  job: text("job").primaryKey(),
  cursor: text("cursor").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    tenantId: text("tenant_id").notNull(),
    deliveryId: text("delivery_id").notNull(),
    event: text("event").notNull(),
    action: text("action").notNull(),
    repository: text("repository").notNull(),
    status: text("status").notNull(),
    error: text("error").notNull(),
    attempts: integer("attempts").notNull(),
    payload: text("payload").notNull(),
    receivedAt: text("received_at").notNull(),
    attemptedAt: text("attempted_at"),
    processedAt: text("processed_at"),
    contentHash: text("content_hash").notNull(),
    duplicateOf: text("duplicate_of").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.deliveryId] })],
);

export const webhookBacklog = sqliteTable(
  "webhook_backlog",
  {
    tenantId: text("tenant_id").notNull(),
    deliveryId: text("delivery_id").notNull(),
    event: text("event").notNull(),
    bucket: text("bucket").notNull(),
    payload: text("payload").notNull(),
    bytes: integer("bytes").notNull(),
    contentHash: text("content_hash").notNull(),
    receivedAt: text("received_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.deliveryId] })],
);

export const githubWebhookSecrets = sqliteTable("github_webhook_secrets", {
  tenantId: text("tenant_id").primaryKey(),
  secret: text("secret").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const gitCommits = sqliteTable(
  "git_commits",
  {
    tenantId: text("tenant_id").notNull(),
    repositoryId: text("repository_id").notNull(),
    sha: text("sha").notNull(),
    ref: text("ref").notNull(),
    message: text("message").notNull(),
    authorName: text("author_name").notNull(),
    authorEmail: text("author_email").notNull(),
    committedAt: text("committed_at").notNull(),
    files: text("files").notNull(),
    deliveryId: text("delivery_id").notNull(),
    recordedAt: text("recorded_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.repositoryId, t.sha] })],
);

// Document store (migrations/0022_docs.sql).
export const docChunks = sqliteTable(
  "doc_chunks",
  {
    tenantId: text("tenant_id").notNull(),
    hash: text("hash").notNull(),
    size: integer("size").notNull(),
    createdAt: text("created_at").notNull(),
    touchedAt: text("touched_at").notNull(),
    gcClaimedAt: text("gc_claimed_at"),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.hash] })],
);

export const documentChunks = sqliteTable(
  "document_chunks",
  {
    tenantId: text("tenant_id").notNull(),
    docHash: text("doc_hash").notNull(),
    seq: integer("seq").notNull(),
    chunkHash: text("chunk_hash").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.docHash, t.seq] })],
);

export const documents = sqliteTable(
  "documents",
  {
    tenantId: text("tenant_id").notNull(),
    id: text("id").notNull(),
    path: text("path").notNull(),
    name: text("name").notNull(),
    hash: text("hash").notNull(),
    size: integer("size").notNull(),
    mimeType: text("mime_type").notNull(),
    collection: text("collection"),
    tags: text("tags").notNull(),
    metadata: text("metadata").notNull(),
    createdAt: text("created_at").notNull(),
    modifiedAt: text("modified_at").notNull(),
    indexedAt: text("indexed_at"),
    /** Tries to index this version (migrations/0043): the queue gives up after a few. */
    indexAttempts: integer("index_attempts").notNull().default(0),
    deletedAt: text("deleted_at"),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);

export const docCollections = sqliteTable(
  "doc_collections",
  {
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.name] })],
);

export const docSnapshots = sqliteTable(
  "doc_snapshots",
  {
    tenantId: text("tenant_id").notNull(),
    id: text("id").notNull(),
    label: text("label"),
    collection: text("collection"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);

export const docSnapshotEntries = sqliteTable(
  "doc_snapshot_entries",
  {
    tenantId: text("tenant_id").notNull(),
    snapshotId: text("snapshot_id").notNull(),
    path: text("path").notNull(),
    docHash: text("doc_hash").notNull(),
    size: integer("size").notNull(),
    mimeType: text("mime_type").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.snapshotId, t.path] })],
);

export const docTexts = sqliteTable(
  "doc_texts",
  {
    tenantId: text("tenant_id").notNull(),
    hash: text("hash").notNull(),
    status: text("status").notNull(),
    extractor: text("extractor").notNull(),
    text: text("text"),
    textBytes: integer("text_bytes").notNull(),
    truncated: integer("truncated").notNull(),
    note: text("note"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.hash] })],
);

// Document store search (migrations/0024_docs_search.sql): kept by indexText and triggers.
export const docSearch = sqliteTable("doc_search", {
  seq: integer("seq").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  tenantKey: text("tenant_key").notNull(),
  docId: text("doc_id").notNull(),
  hash: text("hash").notNull(),
  path: text("path").notNull(),
  title: text("title").notNull(),
  body: text("body").notNull(),
});

export const docTerms = sqliteTable("doc_terms", {
  seq: integer("seq").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  term: text("term").notNull(),
});

// Document store: the knowledge graph's edges (migrations/0025_docs_grep_graph.sql; the trigram
// index doc_texts_fts there is an FTS5 table, queried with SQL).
export const docGraphEdges = sqliteTable(
  "doc_graph_edges",
  {
    tenantId: text("tenant_id").notNull(),
    srcPath: text("src_path").notNull(),
    srcHash: text("src_hash").notNull(),
    seq: integer("seq").notNull(),
    alt: integer("alt").notNull(),
    relation: text("relation").notNull(),
    target: text("target"),
    scheme: text("scheme"),
    nodeKey: text("node_key").notNull(),
    nodeType: text("node_type").notNull(),
    label: text("label").notNull(),
    kind: text("kind"),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.srcPath, t.srcHash, t.seq, t.alt] })],
);

// Document store and GitHub: import sources and watches (migrations/0026_doc_github.sql).
export const docGithubSources = sqliteTable(
  "doc_github_sources",
  {
    tenantId: text("tenant_id").notNull(),
    path: text("path").notNull(),
    repoKey: text("repo_key").notNull(),
    repoPath: text("repo_path").notNull(),
    ref: text("ref").notNull(),
    commitSha: text("commit_sha").notNull(),
    blobSha: text("blob_sha").notNull(),
    docHash: text("doc_hash").notNull(),
    importedAt: text("imported_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.path] })],
);

export const docWatches = sqliteTable(
  "doc_watches",
  {
    tenantId: text("tenant_id").notNull(),
    id: text("id").notNull(),
    session: text("session").notNull(),
    repo: text("repo").notNull(),
    repoKey: text("repo_key").notNull(),
    repoPath: text("repo_path").notNull(),
    ref: text("ref").notNull(),
    prefix: text("prefix").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    lastCommit: text("last_commit"),
    lastSyncedAt: text("last_synced_at"),
    lastNote: text("last_note"),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);

export const localVectorGenerations = sqliteTable("local_vector_generations", {
  namespace: text("namespace").primaryKey(),
  generation: integer("generation").notNull(),
});

// ---------------------------------------------------------------------------------------------
// Code context (seed 004): repository indexes and their generations (migrations/0028).

export const codeIndexes = sqliteTable("code_indexes", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  repo: text("repo").notNull(),
  owner: text("owner").notNull(),
  name: text("name").notNull(),
  ref: text("ref").notNull(),
  generation: text("generation").notNull(),
  commitSha: text("commit_sha").notNull(),
  phase: text("phase").notNull(),
  jobId: text("job_id").notNull(),
  jobKind: text("job_kind").notNull(),
  pendingGeneration: text("pending_generation").notNull(),
  targetCommit: text("target_commit").notNull(),
  fetched: integer("fetched").notNull(),
  filesTotal: integer("files_total").notNull(),
  filesDone: integer("files_done").notNull(),
  chunksTotal: integer("chunks_total").notNull(),
  symbolsTotal: integer("symbols_total").notNull(),
  bytesTotal: integer("bytes_total").notNull(),
  skipped: text("skipped").notNull(),
  truncated: integer("truncated").notNull(),
  errors: text("errors").notNull(),
  headSha: text("head_sha").notNull(),
  headCheckedAt: text("head_checked_at").notNull(),
  startedAt: text("started_at").notNull(),
  finishedAt: text("finished_at").notNull(),
  lastIndexedAt: text("last_indexed_at").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  limits: text("limits").notNull(),
});

export const codeFiles = sqliteTable(
  "code_files",
  {
    tenantId: text("tenant_id").notNull(),
    generation: text("generation").notNull(),
    path: text("path").notNull(),
    language: text("language").notNull(),
    size: integer("size").notNull(),
    lines: integer("lines").notNull(),
    text: text("text").notNull(),
    parsed: integer("parsed").notNull(),
    syntax: integer("syntax").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.generation, t.path] })],
);

export const codeChunks = sqliteTable("code_chunks", {
  seq: integer("seq").primaryKey(),
  id: text("id").notNull(),
  tenantId: text("tenant_id").notNull(),
  generation: text("generation").notNull(),
  scope: text("scope").notNull(),
  path: text("path").notNull(),
  language: text("language").notNull(),
  startLine: integer("start_line").notNull(),
  endLine: integer("end_line").notNull(),
  symbol: text("symbol").notNull(),
  kind: text("kind").notNull(),
  text: text("text").notNull(),
  terms: text("terms").notNull(),
});

export const codeSymbols = sqliteTable("code_symbols", {
  tenantId: text("tenant_id").notNull(),
  generation: text("generation").notNull(),
  name: text("name").notNull(),
  nameLower: text("name_lower").notNull(),
  qualified: text("qualified").notNull(),
  kind: text("kind").notNull(),
  path: text("path").notNull(),
  startLine: integer("start_line").notNull(),
  endLine: integer("end_line").notNull(),
  exported: integer("exported").notNull(),
  signature: text("signature").notNull(),
});

export const codeSymbolRefs = sqliteTable("code_symbol_refs", {
  tenantId: text("tenant_id").notNull(),
  generation: text("generation").notNull(),
  name: text("name").notNull(),
  path: text("path").notNull(),
  line: integer("line").notNull(),
  enclosing: text("enclosing").notNull(),
  kind: text("kind").notNull(),
});

export const codeImports = sqliteTable("code_imports", {
  tenantId: text("tenant_id").notNull(),
  generation: text("generation").notNull(),
  path: text("path").notNull(),
  specifier: text("specifier").notNull(),
  targetPath: text("target_path").notNull(),
  line: integer("line").notNull(),
  names: text("names").notNull(),
});

export const codeCommits = sqliteTable("code_commits", {
  seq: integer("seq").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  repo: text("repo").notNull(),
  scope: text("scope").notNull(),
  sha: text("sha").notNull(),
  message: text("message").notNull(),
  author: text("author").notNull(),
  date: text("date").notNull(),
  filesChanged: text("files_changed").notNull(),
  source: text("source").notNull(),
});

/** A GitHub login (lowercase) mapped to an actor for "Sign in with GitHub" (`npm run oauth -- map-github`). */
export const oauthGithubUsers = sqliteTable("oauth_github_users", {
  login: text("login").primaryKey(),
  githubUserId: integer("github_user_id"),
  tenantId: text("tenant_id").notNull(),
  actorId: text("actor_id").notNull(),
  role: text("role").notNull(),
  createdAt: text("created_at").notNull(),
});

/** The D1 mirror of an OAuth grant (the grant itself lives in OAUTH_KV); revoked_at ends its tokens. */
export const oauthGrants = sqliteTable("oauth_grants", {
  grantId: text("grant_id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  actorId: text("actor_id").notNull(),
  userId: text("user_id").notNull(),
  clientId: text("client_id").notNull(),
  clientName: text("client_name").notNull(),
  redirectUri: text("redirect_uri").notNull(),
  scope: text("scope").notNull(),
  signedInWith: text("signed_in_with").notNull(),
  githubLogin: text("github_login"),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  revokedAt: text("revoked_at"),
  revokedReason: text("revoked_reason"),
  /** The API key that signed the grant in (migrations/0041); revoking it ends the grant. */
  keyId: text("key_id"),
  checkedAt: text("checked_at"),
  providerEndedAt: text("provider_ended_at"),
});

/** Refresh tokens a grant rotated out, by hash (migrations/0041): presenting one again ends the grant. */
export const oauthRefreshTokens = sqliteTable("oauth_refresh_tokens", {
  tokenId: text("token_id").primaryKey(),
  grantId: text("grant_id").notNull(),
  rotatedAt: text("rotated_at").notNull(),
  successorId: text("successor_id"),
  retries: integer("retries").notNull().default(0),
});

// Code review (seed 004): per-repository review settings (migrations/0031).

export const reviewSettings = sqliteTable(
  "review_settings",
  {
    tenantId: text("tenant_id").notNull(),
    repo: text("repo").notNull(),
    hotspots: text("hotspots"),
    configPaths: text("config_paths"),
    reactive: integer("reactive").notNull().default(0),
    publish: integer("publish").notNull().default(0),
    prStory: integer("pr_story").notNull().default(0),
    invariantsPath: text("invariants_path").notNull().default(".review-invariants.yml"),
    updatedAt: text("updated_at").notNull(),
    updatedBy: text("updated_by").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.repo] })],
);

/** Reactive review sessions (migrations/0032); the live plan is in ReviewSessionDO. */
export const reviewSessions = sqliteTable(
  "review_sessions",
  {
    tenantId: text("tenant_id").notNull(),
    id: text("id").notNull(),
    repo: text("repo").notNull(),
    pullNumber: integer("pull_number"),
    commitHash: text("commit_hash").notNull(),
    baseRef: text("base_ref").notNull(),
    source: text("source").notNull(),
    status: text("status").notNull(),
    totalSteps: integer("total_steps").notNull(),
    completedSteps: integer("completed_steps").notNull().default(0),
    findingsCount: integer("findings_count").notNull().default(0),
    error: text("error"),
    result: text("result"),
    state: text("state"),
    reviewId: integer("review_id"),
    reviewUrl: text("review_url"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    finishedAt: text("finished_at"),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);

// Plans (seed 004): one row per plan, and every version of its document (migrations/0033).

export const plans = sqliteTable(
  "plans",
  {
    tenantId: text("tenant_id").notNull(),
    id: text("id").notNull(),
    name: text("name").notNull(),
    nameLower: text("name_lower").notNull(),
    goal: text("goal").notNull(),
    status: text("status").notNull(),
    tags: text("tags").notNull().default("[]"),
    currentVersion: integer("current_version").notNull(),
    stepCount: integer("step_count").notNull(),
    createdAt: text("created_at").notNull(),
    createdBy: text("created_by").notNull(),
    updatedAt: text("updated_at").notNull(),
    updatedBy: text("updated_by").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);

/** Append-only: an overwrite or a rollback adds a version. */
export const planVersions = sqliteTable(
  "plan_versions",
  {
    tenantId: text("tenant_id").notNull(),
    planId: text("plan_id").notNull(),
    version: integer("version").notNull(),
    plan: text("plan").notNull(),
    changeType: text("change_type").notNull(),
    changeSummary: text("change_summary").notNull(),
    createdAt: text("created_at").notNull(),
    createdBy: text("created_by").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.planId, t.version] })],
);

/** Execution state of plan steps; pending/ready/blocked are derived, not stored (migrations/0034). */
export const planSteps = sqliteTable(
  "plan_steps",
  {
    tenantId: text("tenant_id").notNull(),
    planId: text("plan_id").notNull(),
    stepNumber: integer("step_number").notNull(),
    status: text("status").notNull().default("pending"),
    retries: integer("retries").notNull().default(0),
    startedAt: text("started_at"),
    startedBy: text("started_by"),
    finishedAt: text("finished_at"),
    finishedBy: text("finished_by"),
    notes: text("notes").notNull().default(""),
    error: text("error").notNull().default(""),
    filesModified: text("files_modified").notNull().default("[]"),
    repo: text("repo"),
    branch: text("branch"),
    commitSha: text("commit_sha"),
    rev: integer("rev").notNull().default(0),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.planId, t.stepNumber] })],
);

/** The task plan_to_tasks made for a step (migrations/0034). */
export const planStepTasks = sqliteTable(
  "plan_step_tasks",
  {
    tenantId: text("tenant_id").notNull(),
    planId: text("plan_id").notNull(),
    stepNumber: integer("step_number").notNull(),
    taskId: text("task_id").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.planId, t.stepNumber] })],
);

/** Approval requests for a plan version, whole or some steps; each reaches its approvers as a handoff (migrations/0035). */
export const planApprovals = sqliteTable(
  "plan_approvals",
  {
    tenantId: text("tenant_id").notNull(),
    id: text("id").notNull(),
    planId: text("plan_id").notNull(),
    planVersion: integer("plan_version").notNull(),
    stepNumbers: text("step_numbers").notNull().default("[]"),
    approverIds: text("approver_ids").notNull(),
    status: text("status").notNull(),
    summary: text("summary").notNull(),
    note: text("note").notNull().default(""),
    requestedBy: text("requested_by").notNull(),
    createdAt: text("created_at").notNull(),
    dueAt: text("due_at"),
    respondedBy: text("responded_by"),
    respondedAt: text("responded_at"),
    comment: text("comment"),
    modifications: text("modifications"),
    handoffId: text("handoff_id").notNull(),
    fingerprint: text("fingerprint").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);

/** Path reservations in a registered repository (migrations/0045, src/work/reservations/model.ts). */
export const pathReservations = sqliteTable("path_reservations", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  repositoryId: text("repository_id").notNull(),
  actorId: text("actor_id").notNull(),
  pattern: text("pattern").notNull(),
  exclusive: integer("exclusive").notNull(),
  taskId: text("task_id"),
  reason: text("reason").notNull(),
  fencingToken: integer("fencing_token").notNull(),
  sessionId: text("session_id").notNull(),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  releasedAt: text("released_at"),
});

/** Outgoing webhooks: subscriptions to notifications (migrations/0047, src/work/outhooks/model.ts). */
export const outboundHooks = sqliteTable("outbound_hooks", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  ownerActorId: text("owner_actor_id").notNull(),
  url: text("url").notNull(),
  secret: text("secret").notNull(),
  allActors: integer("all_actors").notNull(),
  kinds: text("kinds").notNull(),
  label: text("label").notNull(),
  active: integer("active").notNull(),
  cursorSeq: integer("cursor_seq").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** The outgoing webhooks' delivery log, one row per (subscription, notification) (migrations/0047). */
export const outboundHookDeliveries = sqliteTable("outbound_hook_deliveries", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  hookId: text("hook_id").notNull(),
  notificationId: text("notification_id").notNull(),
  notificationSeq: integer("notification_seq").notNull(),
  recipientActorId: text("recipient_actor_id").notNull(),
  kind: text("kind").notNull(),
  status: text("status", { enum: ["pending", "delivered", "failed"] }).notNull(),
  attempts: integer("attempts").notNull(),
  attemptLimit: integer("attempt_limit").notNull(),
  lastStatus: integer("last_status"),
  lastError: text("last_error").notNull(),
  nextAttemptAt: text("next_attempt_at"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  deliveredAt: text("delivered_at"),
  replayedAt: text("replayed_at"),
});

/** The story comment the server keeps on a pull request, one per (repository, PR) (migrations/0048, src/coordination/story). */
export const prStoryComments = sqliteTable(
  "pr_story_comments",
  {
    tenantId: text("tenant_id").notNull(),
    repositoryId: text("repository_id").notNull(),
    prNumber: integer("pr_number").notNull(),
    commentId: integer("comment_id").notNull().default(0),
    commentUrl: text("comment_url").notNull().default(""),
    bodyHash: text("body_hash").notNull().default(""),
    headSha: text("head_sha").notNull().default(""),
    claimedAt: text("claimed_at"),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.repositoryId, t.prNumber] })],
);

/** Paths or globs of a repository a note, decision or code ref is about (migrations/0046, src/work/memory/model.ts). */
export const memoryPaths = sqliteTable(
  "memory_paths",
  {
    tenantId: text("tenant_id").notNull(),
    objectType: text("object_type").notNull(),
    objectId: text("object_id").notNull(),
    repositoryId: text("repository_id").notNull(),
    pattern: text("pattern").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.objectType, t.objectId, t.repositoryId, t.pattern] })],
);

/** A push that changed what a note, decision, code ref or change-ledger decision is about (migrations/0046). */
export const memoryStaleMarks = sqliteTable(
  "memory_stale_marks",
  {
    tenantId: text("tenant_id").notNull(),
    objectType: text("object_type").notNull(),
    objectId: text("object_id").notNull(),
    repositoryId: text("repository_id").notNull(),
    commitSha: text("commit_sha").notNull(),
    path: text("path").notNull(),
    changedAt: text("changed_at").notNull(),
    markedAt: text("marked_at").notNull(),
    clearedAt: text("cleared_at"),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.objectType, t.objectId] })],
);

/** Files an agent edited, as its client's PostToolUse hook reported them (migrations/0049, src/server/hooks). */
export const hookEdits = sqliteTable(
  "hook_edits",
  {
    tenantId: text("tenant_id").notNull(),
    actorId: text("actor_id").notNull(),
    sessionId: text("session_id").notNull(),
    path: text("path").notNull(),
    tool: text("tool").notNull(),
    editedAt: text("edited_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.actorId, t.sessionId, t.path] })],
);

/** The MCP session an agent client's own session id was last seen on (migrations/0051, src/work/runs/client-sessions.ts). */
export const clientSessions = sqliteTable(
  "client_sessions",
  {
    tenantId: text("tenant_id").notNull(),
    actorId: text("actor_id").notNull(),
    clientSessionId: text("client_session_id").notNull(),
    mcpSessionId: text("mcp_session_id").notNull(),
    seenAt: text("seen_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.actorId, t.clientSessionId] })],
);

/** The dashboard's sign-in sessions: an API key exchanged for a cookie (src/auth/app-session.ts). */
export const appSessions = sqliteTable("app_sessions", {
  tokenHash: text("token_hash").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  actorId: text("actor_id").notNull(),
  keyId: text("key_id").notNull(),
  access: text("access", { enum: ["full", "readonly"] }).notNull(),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
});

/** MCP tasks: a long call's handle, polled with tasks/get (migrations/0057, src/server/tasks). */
export const mcpTasks = sqliteTable(
  "mcp_tasks",
  {
    tenantId: text("tenant_id").notNull(),
    id: text("id").notNull(),
    actorId: text("actor_id").notNull(),
    tool: text("tool").notNull(),
    driver: text("driver").notNull(),
    link: text("link").notNull(),
    status: text("status", { enum: ["working", "input_required", "completed", "failed", "cancelled"] }).notNull(),
    statusMessage: text("status_message").notNull().default(""),
    inputRequests: text("input_requests").notNull().default("{}"),
    result: text("result"),
    error: text("error"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    ttlMs: integer("ttl_ms").notNull(),
    pollMs: integer("poll_ms").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);
