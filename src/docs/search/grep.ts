import { z } from "zod";
import { GREP_CONTEXT_MAX, GREP_LIMIT_DEFAULT, GREP_LIMIT_MAX, GREP_LINE_MAX, GREP_PATHS_MAX, GREP_PATTERN_MAX, grepDocuments } from "../grep/grep";
import { currentScope } from "../sessions/model";
import { defineOp } from "../shared";
import { MAX_PATH_CHARS } from "../store/store";

export const grepOp = defineOp({
  name: "grep",
  category: "query",
  description: `Search the text of stored documents for an RE2 regular expression, line by line (linear time; no backreferences or lookaround). Returns matching lines with path, hash and optional line numbers and context; count → per-file counts; files_with_matches → paths. Lines over ${GREP_LINE_MAX} characters are cut around the match. A call has a work budget: when it is reached the answer is partial with truncated: true and a note.`,
  params: z.object({
    pattern: z.string().min(1).max(GREP_PATTERN_MAX).describe("Regular expression (RE2 syntax), matched against each line, e.g. 'class\\s+\\w+Handler' or 'TODO|FIXME'."),
    paths: z
      .array(z.string().min(1).max(MAX_PATH_CHARS))
      .max(GREP_PATHS_MAX)
      .optional()
      .describe("Limit the search to these files, folders (everything under them) or globs ('src/**/*.ts'). Default: every document with extracted text."),
    ignore_case: z.boolean().default(false).describe("Case-insensitive matching."),
    line_numbers: z.boolean().default(false).describe("Include each match's 1-based line_number."),
    context: z.number().int().min(0).max(GREP_CONTEXT_MAX).default(0).describe(`Lines of context before and after each match (0–${GREP_CONTEXT_MAX}).`),
    word: z.boolean().default(false).describe("Match whole words only (the pattern is wrapped in \\b…\\b)."),
    count: z.boolean().default(false).describe("Return only the number of matching lines per file (counts)."),
    files_with_matches: z.boolean().default(false).describe("Return only the files that match (paths and files with hashes)."),
    max_count: z.number().int().min(0).max(1_000_000).default(0).describe("Stop after this many matching lines per file; 0 = no limit."),
    limit: z
      .number()
      .int()
      .min(1)
      .max(GREP_LIMIT_MAX)
      .default(GREP_LIMIT_DEFAULT)
      .describe(`Maximum entries returned: matching lines, or files in count / files_with_matches mode (1–${GREP_LIMIT_MAX}, default ${GREP_LIMIT_DEFAULT}).`),
    use_session: z.boolean().default(true).describe("Restrict to the current docs session's pins when a session with pins is active (default true)."),
  }),
  run: async (ctx, params) => grepDocuments(ctx, params, (params.use_session ? await currentScope(ctx) : null) ?? undefined),
});
