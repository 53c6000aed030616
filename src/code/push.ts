/**
 * What a push means for the code index: its commits are recorded for git_commit_retrieval, and
 * each complete index of the pushed branch starts an incremental job from its commit to the new
 * head. A repository needs no registration for either (the index names it by owner/name).
 */
import type { Ctx } from "../core/context";
import { FULL_COMMIT_SHA } from "../core/sha";
import { recordCommits, type CommitRecord } from "./commits";
import { startIndexJob } from "./jobs";
import { findIndex, repoKey } from "./store";

type Json = Record<string, unknown>;
const str = (v: unknown) => (typeof v === "string" ? v : "");
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

export async function applyCodePush(ctx: Ctx, payload: Json): Promise<string | null> {
  const repository = obj(payload.repository);
  const owner = str(obj(repository.owner).login) || str(obj(repository.owner).name);
  const name = str(repository.name);
  const ref = str(payload.ref);
  if (!owner || !name || !ref.startsWith("refs/heads/")) return null;
  const repo = repoKey(owner, name);
  const commits: CommitRecord[] = arr(payload.commits)
    .map(obj)
    .flatMap((c) => {
      const sha = str(c.id).toLowerCase();
      if (!FULL_COMMIT_SHA.test(sha)) return [];
      const files = [...new Set([...arr(c.added), ...arr(c.modified), ...arr(c.removed)].map(str).filter((f) => f && f.length <= 1000))];
      return [{ sha, message: str(c.message), author: str(obj(c.author).name), date: str(c.timestamp), files }];
    });
  const recorded = await recordCommits(ctx.d1, ctx.tenantId, repo, commits, "push");
  const branch = ref.slice("refs/heads/".length);
  const head = str(payload.after).toLowerCase();
  const index = await findIndex(ctx.d1, ctx.tenantId, repo, branch);
  let job = "";
  if (index && index.generation && FULL_COMMIT_SHA.test(head) && head !== index.commit_sha && !payload.deleted) {
    const started = await startIndexJob(ctx.env, index, "incremental", { base: index.commit_sha, head }, ctx.clock.now());
    job = started.started ? `, incremental index job ${started.job_id} started` : `, index busy (job ${started.job_id}, ${started.phase}): index_status shows it behind`;
  }
  return recorded > 0 || job ? `code: ${recorded} commit(s) recorded${job}` : null;
}
