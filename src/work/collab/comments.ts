import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput, notFound } from "../../core/errors";
import { activityStatement, actorRefField, cursorField, decodeKeyset, limitField, resolveActor, keysetPage } from "../shared";
import { announceNotices } from "./inbox";
import { commentSchema, findCommentTarget, findObject, getComment, insertCommentStatement, insertMentionStatement, listComments, objectFields, toComment } from "./model";

export const commentAddTool = defineTool({
  name: "comment_add",
  title: "Add a comment",
  toolset: "collab",
  description: "Comment on a project, task, decision, work request (handoff) or note. mentions notify exactly the actors named; parent_comment_id makes it a reply in the same thread.",
  input: z.object({
    ...objectFields,
    body: z.string().trim().min(1).max(20_000).describe("The comment (up to 20,000 characters)."),
    mentions: z.array(actorRefField("An actor to notify.")).max(20).optional().describe('Actors to notify (ids, external_refs or "me").'),
    parent_comment_id: z.string().min(1).max(100).optional().describe("The comment this replies to (same object)."),
  }),
  output: z.object({ comment: commentSchema.describe("The new comment."), notified: z.array(z.string()).describe("Actor ids notified.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  keyedBatch: true,
  run: async (ctx, input) => {
    const { id: objectId, projectId } = await findObject(ctx, input.object_type, input.object_id);
    if (input.parent_comment_id) {
      const parent = await findCommentTarget(ctx, input.parent_comment_id);
      if (!parent) throw notFound("comment", input.parent_comment_id, "Reply to a comment from comment_query.");
      if (parent.object_type !== input.object_type || parent.object_id !== objectId) {
        throw invalidInput("parent_comment_id is a comment on another object.", "A reply must be on the same object as the comment it answers.");
      }
    }
    const mentioned = [...new Set(await Promise.all((input.mentions ?? []).map((m) => resolveActor(ctx, m))))];
    const id = uuidv7();
    const now = iso(ctx.clock.now());
    await ctx.d1.batch([
      ...(ctx.keyed?.open() ?? []),
      insertCommentStatement(ctx, {
        id,
        objectType: input.object_type,
        objectId,
        body: input.body,
        parentCommentId: input.parent_comment_id ?? null,
        mentions: JSON.stringify(mentioned),
        createdAt: now,
      }),
      ...mentioned.map((actor) => insertMentionStatement(ctx, uuidv7(), actor, id, input.body.slice(0, 200), now)),
      activityStatement(ctx, { verb: "comment.added", objectType: input.object_type, objectId, projectId, summary: input.body.slice(0, 200), metadata: { comment_id: id } }),
    ]);
    await announceNotices(ctx, mentioned);
    const row = await getComment(ctx, id);
    return { comment: toComment(row!), notified: mentioned };
  },
  summarize: (r) => `Comment ${r.comment.id} added${r.notified.length ? `, ${r.notified.length} notified` : ""}.`,
});

export const commentQueryTool = defineTool({
  name: "comment_query",
  title: "Read comments",
  toolset: "collab",
  description: "The comment thread on an object, oldest first (replies carry parent_comment_id).",
  input: z.object({ ...objectFields, limit: limitField(100, 500), cursor: cursorField }),
  output: z.object({
    items: z.array(commentSchema).describe("Comments, oldest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  fields: true,
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const { id: objectId } = await findObject(ctx, input.object_type, input.object_id);
    const after = decodeKeyset(input.cursor, 1);
    const rows = await listComments(ctx, input.object_type, objectId, after?.[0] ?? 0, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.seq]);
    return { items: page.map(toComment), ...cursor };
  },
  summarize: (r) => `${r.items.length} comment(s).`,
});
