import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { secretKinds } from "../../core/secrets";
import { defineTool } from "../../core/define-tool";
import { notFound, ToolError } from "../../core/errors";
import { countOccurrenceStatement, FEEDBACK_KINDS, findLiveRequestByFingerprint, getRequest, insertRequestStatement, requestSchema } from "./model";

export const featureRequestCreateTool = defineTool({
  name: "feature_request_create",
  title: "File product feedback",
  toolset: "feedback",
  // Feedback leaves the tenant for the operators, so secret-shaped text is refused outright, not masked.
  secrets: "handler",
  description:
    "File a bug, friction or missing capability in this server the moment you hit it. The title and body are shared with the server's operators: never put secrets or client-confidential content in them (secret-looking text is refused). A fingerprint de-duplicates: filing the same live request again counts an occurrence instead of a new request.",
  input: z.object({
    title: z.string().trim().min(1).max(200).describe("What is wrong or missing, in a line."),
    body: z.string().max(8000).optional().describe("Details: what you did, what happened, what you expected."),
    kind: z.enum(FEEDBACK_KINDS).describe("bug, friction, capability or docs."),
    severity: z.enum(["low", "medium", "high"]).default("medium").describe("low, medium (default) or high."),
    tool_name: z.string().max(100).optional().describe("The tool involved."),
    error_code: z.string().max(100).optional().describe("The error code you got."),
    context: z.string().max(2000).optional().describe("What you were trying to do."),
    fingerprint: z.string().min(1).max(200).optional().describe("De-duplication key (e.g. tool:error_code)."),
  }),
  output: z.object({ request: requestSchema.describe("The request."), deduplicated: z.boolean().describe("True when a live request with this fingerprint was counted instead.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const kinds = secretKinds([input.title, input.body ?? "", input.context ?? ""].join("\n"));
    if (kinds.length > 0) {
      throw new ToolError("secret_in_feedback", `The request looks like it contains a secret (${kinds.join(", ")}); it was not filed.`, {
        hint: "Remove credentials and confidential data, describe the problem in general terms, and file again.",
      });
    }
    const id = uuidv7();
    const now = iso(ctx.clock.now());
    const [inserted] = await ctx.d1.batch<{ id: string }>([
      insertRequestStatement(ctx, {
        id,
        title: input.title,
        body: input.body ?? "",
        kind: input.kind,
        severity: input.severity,
        toolName: input.tool_name ?? "",
        errorCode: input.error_code ?? "",
        context: input.context ?? "",
        fingerprint: input.fingerprint ?? null,
        now,
      }),
      // Filing a live duplicate again counts an occurrence (only when the insert above did nothing).
      countOccurrenceStatement(ctx, input.fingerprint ?? "", id, now),
    ]);
    const created = inserted!.results.length > 0;
    const row = created ? await getRequest(ctx, id) : await findLiveRequestByFingerprint(ctx, input.fingerprint ?? "");
    if (!row) throw notFound("feature request", id, "Retry the call.");
    const { seq: _seq, ...request } = row;
    return { request, deduplicated: !created };
  },
  summarize: (r) => (r.deduplicated ? `Counted another occurrence of ${r.request.id}.` : `Filed ${r.request.kind} ${r.request.id}.`),
});
