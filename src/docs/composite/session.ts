/** docs_session (the seed's `session`): the session ops (./surface) behind one {action, params} tool. */
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { namedField, openResult, sessionParamsSchema, sessionTool } from "../../core/composite";
import { DOCS_SURFACE } from "./surface";

export const docsSession = defineTool({
  name: "docs_session",
  seedName: "session",
  title: "Document store: session",
  description:
    "Scope your document-store work: start a named session, pin documents to it by path glob or hash (list and search then stay within the pins), unpin, stop, and watch a GitHub path so pushes re-import it. {action, params}; actions: start, stop, pin, unpin, watch.",
  toolset: "docs",
  input: z.object({
    action: namedField("start, stop, pin, unpin or watch.", DOCS_SURFACE.names("session")).optional(),
    params: sessionParamsSchema.optional().describe("The action's parameters (describe with target 'session_<action>' gives them)."),
  }),
  output: openResult,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  run: (ctx, input) => sessionTool(ctx, DOCS_SURFACE, input.action, input.params),
  summarize: () => "Session",
});
