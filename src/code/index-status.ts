/** An index's status as index_status answers it, and as a finished index task's result carries it. */
import { z } from "zod";
import { effectiveLimits, limitsOut } from "./limits";
import type { IndexRow } from "./store";

export const statusItem = z.object({
  index_id: z.string().describe("The index."),
  repo: z.string().describe("owner/name."),
  ref: z.string().describe("The ref indexed."),
  phase: z.string().describe("idle, queued, fetching, parsing, embedding, switching, complete, failed or cleared."),
  complete: z.boolean().describe("True when the index is complete and searchable at indexed_commit, with no job running."),
  indexed_commit: z.string().describe("The commit searches reflect ('' before the first index completes)."),
  job_id: z.string().describe("The running or last job."),
  target_commit: z.string().describe("The commit the running (or last) job indexes."),
  files_done: z.number().int().describe("Files parsed by the running (or last) job."),
  files_total: z.number().int().describe("Files it has to parse."),
  chunks: z.number().int().describe("Chunks indexed."),
  symbols: z.number().int().describe("Symbol definitions indexed."),
  skipped: z.record(z.string(), z.number().int()).describe("Files left out, by reason (binary, vendored, generated, lockfile, too_large, over_limit, not_text)."),
  truncated: z.boolean().describe("A size limit stopped the read early."),
  limits: z
    .object({
      max_files: z.number().int().describe("Most files read."),
      max_file_bytes: z.number().int().describe("Larger files are skipped."),
      max_total_bytes: z.number().int().describe("Most bytes read in all."),
    })
    .describe("The read limits in force for this repository."),
  errors: z.array(z.string()).describe("The last errors (up to 20)."),
  head_commit: z.string().describe("The ref's head on GitHub when last checked."),
  fresh: z.boolean().nullable().describe("True when the indexed commit is the head; null when unknown."),
  started_at: z.string().describe("When the last job started."),
  finished_at: z.string().describe("When it finished, or ''."),
  last_indexed_at: z.string().describe("When the index last became current."),
});

export function statusOf(r: IndexRow): z.infer<typeof statusItem> {
  return {
    index_id: r.id,
    repo: `${r.owner}/${r.name}`,
    ref: r.ref,
    phase: r.phase,
    complete: r.phase === "complete" && r.generation !== "",
    indexed_commit: r.commit_sha,
    job_id: r.job_id,
    target_commit: r.target_commit,
    files_done: r.files_done,
    files_total: r.files_total,
    chunks: r.chunks_total,
    symbols: r.symbols_total,
    skipped: JSON.parse(r.skipped) as Record<string, number>,
    truncated: r.truncated === 1,
    limits: limitsOut(effectiveLimits(r.limits)),
    errors: JSON.parse(r.errors) as string[],
    head_commit: r.head_sha,
    fresh: r.head_sha && r.commit_sha ? r.head_sha === r.commit_sha : null,
    started_at: r.started_at,
    finished_at: r.finished_at,
    last_indexed_at: r.last_indexed_at,
  };
}
