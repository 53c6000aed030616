/**
 * How much of a repository an index reads: the server's defaults, lowered or raised per
 * repository within hard caps (a Worker has 128 MB of memory, and the files of one read are held
 * while they are stored).
 */
import { z } from "zod";
import { DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits } from "./archive";

export const HARD_CAPS: ArchiveLimits = { maxFiles: 20_000, maxFileBytes: 1024 * 1024, maxTotalBytes: 64 * 1024 * 1024 };

export const limitsField = z
  .object({
    max_files: z.number().int().min(1).max(HARD_CAPS.maxFiles).optional().describe(`Most files read (default ${DEFAULT_ARCHIVE_LIMITS.maxFiles}).`),
    max_file_bytes: z.number().int().min(1024).max(HARD_CAPS.maxFileBytes).optional().describe(`Larger files are skipped (default ${DEFAULT_ARCHIVE_LIMITS.maxFileBytes}).`),
    max_total_bytes: z
      .number()
      .int()
      .min(1024 * 1024)
      .max(HARD_CAPS.maxTotalBytes)
      .optional()
      .describe(`Most bytes read in all (default ${DEFAULT_ARCHIVE_LIMITS.maxTotalBytes}).`),
  })
  .strict()
  .optional()
  .describe("Read limits for this repository, kept for later jobs.");

export type LimitsInput = z.infer<typeof limitsField>;

/** The limits an index reads with: its own (stored JSON) over the defaults. */
export function effectiveLimits(stored: string): ArchiveLimits {
  const own = JSON.parse(stored || "{}") as NonNullable<LimitsInput>;
  return {
    maxFiles: own.max_files ?? DEFAULT_ARCHIVE_LIMITS.maxFiles,
    maxFileBytes: own.max_file_bytes ?? DEFAULT_ARCHIVE_LIMITS.maxFileBytes,
    maxTotalBytes: own.max_total_bytes ?? DEFAULT_ARCHIVE_LIMITS.maxTotalBytes,
  };
}

export const limitsOut = (l: ArchiveLimits) => ({ max_files: l.maxFiles, max_file_bytes: l.maxFileBytes, max_total_bytes: l.maxTotalBytes });
