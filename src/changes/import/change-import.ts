/** change_import: up to 100 change events from elsewhere, each with its original time and a stable import_key. */
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { logChangeTool } from "../tools";
import { IMPORT_KEY_MAX, IMPORT_MAX, importEvents, importItemSchema } from "./model";

/** The fields an imported event shares with log_change, described as log_change describes them. */
export const importedChangeFields = logChangeTool.input.pick({
  entity_path: true,
  change_type: true,
  entity_type: true,
  diff: true,
  reasoning: true,
  agent: true,
  git_commit: true,
  project: true,
  changeset_id: true,
  rename_from: true,
});

const importEventSchema = importedChangeFields.extend({
  timestamp: z.string().min(1).max(64).describe("When the change happened (UTC ISO-8601, e.g. 2024-03-01T09:30:00Z); history and blame order events by it. Not in the future."),
  import_key: z
    .string()
    .min(1)
    .max(IMPORT_KEY_MAX)
    .describe("Your stable id for this event, e.g. git:owner/repo:<sha>:<path> or migration:<file>:<n>; an event whose key was imported before is skipped."),
});

export const importResultSchema = z.object({
  imported: z.number().int().describe("Events written by this call."),
  skipped: z.number().int().describe("Events whose import_key the ledger already had: nothing written for them."),
  ids: z.array(z.string()).describe("Ids of the events written, in the order given."),
  items: z.array(importItemSchema).describe("Per event, in the order given: imported or skipped, and its id."),
  warnings: z.array(z.string()).describe("Truncation and secret warnings, each naming its event (events[i]); at most 20."),
});

export const changeImportTool = defineTool({
  name: "change_import",
  title: "Import change events",
  toolset: "imports",
  description: `Import up to ${IMPORT_MAX} change events that happened elsewhere (a repository's history, migration files), each with its original timestamp and an import_key. Events whose import_key was imported before are skipped, so a re-run writes nothing twice. All or nothing: one bad event refuses the call, naming its index. Rename events (rename_from) write both halves as log_change does.`,
  input: z.object({
    events: z.array(importEventSchema).min(1).max(IMPORT_MAX).describe(`The events, at most ${IMPORT_MAX}; same fields as log_change plus timestamp and import_key.`),
  }),
  output: importResultSchema,
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  cost: { items: "events" },
  run: (ctx, input) => importEvents(ctx, input.events),
  summarize: (r) => `Imported ${r.imported} event(s), skipped ${r.skipped} already imported.`,
});
