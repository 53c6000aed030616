/**
 * list_review_sessions: the reactive review sessions a tenant has, from their D1 rows, so a caller
 * without a session_id (an agent, the dashboard) can find one. Not in seed 004, whose sessions live
 * in one process and are looked up by id only.
 */
import { z } from "zod";
import { repoKey } from "../../code/store";
import { keysetPage } from "../../core/cursor";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { repoField, resolveRepo } from "../../git/repo";
import { cursorField, limitField } from "../../work/shared";
import { progressFrom, SESSION_STATUSES, type SessionStatus } from "../reactive-sessions/plan";
import { progressSchema, pullNumberField, sessionFields, sessionListQuery, statusField } from "./model";

const sessionItem = z.object({
  session_id: sessionFields.session_id,
  repo: z.string().describe("owner/name, lowercased."),
  pull_number: sessionFields.pull_number,
  commit_hash: sessionFields.commit_hash,
  base_ref: sessionFields.base_ref,
  source: sessionFields.source,
  status: statusField,
  progress: progressSchema.describe("Steps done."),
  findings_count: sessionFields.findings_count,
  error: sessionFields.error,
  review_url: sessionFields.review_url,
  created_by: z.string().describe("The actor id that started it (a webhook session: the tenant's github service actor)."),
  created_at: sessionFields.created_at,
  updated_at: sessionFields.updated_at,
  finished_at: z.string().nullable().describe("When it ended, or null while it runs or is paused."),
});

export const listReviewSessionsTool = defineTool({
  name: "list_review_sessions",
  title: "List reactive review sessions",
  toolset: "review",
  description: "Reactive review sessions, newest first, optionally of one repository or pull request and in some statuses. get_review_status has one session's detail.",
  input: z.object({
    repo: repoField.optional().describe("Only this repository's sessions: owner/name (any case), or a registered repository's id or slug."),
    pull_number: pullNumberField.optional().describe("Only this pull request's sessions (with repo)."),
    status: z.array(statusField).min(1).max(SESSION_STATUSES.length).optional().describe("Only sessions in these statuses."),
    limit: limitField(20, 100),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(sessionItem).describe("Sessions, newest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    if (input.pull_number !== undefined && input.repo === undefined) {
      throw invalidInput(
        "pull_number needs repo: pull request numbers are per repository.",
        'Name the repository too, e.g. list_review_sessions {repo: "owner/name", pull_number: 12}; or drop pull_number.',
      );
    }
    const named = input.repo === undefined ? undefined : await resolveRepo(ctx, input.repo);
    const filter = {
      repo: named && repoKey(named.owner, named.name),
      pullNumber: input.pull_number,
      statuses: input.status,
      cursor: input.cursor,
    };
    const rows = await sessionListQuery(ctx.d1, ctx.tenantId, filter, input.limit + 1).all();
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.createdAt, last.id]);
    const items = page.map((r) => ({
      session_id: r.id,
      repo: r.repo,
      pull_number: r.pullNumber,
      commit_hash: r.commitHash,
      base_ref: r.baseRef,
      source: r.source as "tool" | "webhook",
      status: r.status as SessionStatus,
      progress: progressFrom(r.completedSteps, r.totalSteps),
      findings_count: r.findingsCount,
      error: r.error,
      review_url: r.reviewUrl,
      created_by: r.createdBy,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      finished_at: r.finishedAt,
    }));
    return { items, ...cursor };
  },
  summarize: (r) => `${r.items.length} review session(s)${r.next_cursor ? ", more with next_cursor" : ""}.`,
});
