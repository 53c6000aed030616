/**
 * Attachment uploads that died between putting their object in R2 and committing the batch that
 * claims it (blob_versions) leave an object no row names. This sweep deletes such objects once
 * they are older than the grace time, a few pages of one tenant's uploads per run.
 */
import { sweepRowlessObjects } from "../../cron/rowless-objects";
import type { Env } from "../../env";
import { blobKeysAtPaths, uploadPrefix } from "./model";

export const ATTACHMENT_SWEEP_JOB = "attachment_rowless_upload_sweep";
/** An upload commits its row right after its put; an hour is far beyond any request. */
export const ATTACHMENT_ORPHAN_GRACE_MS = 60 * 60 * 1000;
/** Storage paths per lookup: at most 100 bound parameters per statement. */
const PATHS_PER_QUERY = 90;

/** Names under the upload prefix are `<uuid>/<storage_path>`. */
const storagePathOf = (name: string) => name.slice(name.indexOf("/") + 1);

export async function sweepRowlessUploads(env: Env, now: Date, pages = 4): Promise<string> {
  const r = await sweepRowlessObjects(
    env,
    now,
    {
      job: ATTACHMENT_SWEEP_JOB,
      prefix: uploadPrefix,
      graceMs: ATTACHMENT_ORPHAN_GRACE_MS,
      referenced: async (env, tenantId, names) => {
        const prefix = uploadPrefix(tenantId);
        const paths = [...new Set(names.map(storagePathOf))];
        const keys = new Set<string>();
        for (let i = 0; i < paths.length; i += PATHS_PER_QUERY) {
          const group = paths.slice(i, i + PATHS_PER_QUERY);
          for (const key of await blobKeysAtPaths(env.DB, tenantId, group)) keys.add(key);
        }
        return new Set(names.filter((name) => keys.has(prefix + name)));
      },
    },
    pages,
  );
  return `${r.listed} upload object(s) checked, ${r.removed} without a row deleted${r.finished ? "; all tenants swept" : "; more next run"}`;
}
