/**
 * watch (seed 003, session): `root` names what to watch. There is no local filesystem here, so a
 * root is a GitHub repository folder or file, and "changes" are pushes to a branch.
 */
import { z } from "zod";
import { repoField } from "../../git/repo";
import { excerpt, invalidInput } from "../../core/errors";
import { relativePath } from "../github/import";
import { currentSession } from "./model";
import { isLocalPath, noLocalFilesystem, quotedPath } from "../store/local-paths";
import { defineOp } from "../shared";
import { MAX_LABEL_CHARS, MAX_PATH_CHARS } from "../store/store";
import { disableWatch, enableWatch, MAX_WATCHES, PUSH_MAX_FILES, type WatchTarget } from "../github/watch";

const params = z.object({
  session: z.string().min(1).max(MAX_LABEL_CHARS).optional().describe("The docs session the watch belongs to (ended with it). Omitted: a watch of its own, until disabled."),
  root: z
    .string()
    .min(1)
    .max(MAX_PATH_CHARS + 200)
    .optional()
    .describe("What to watch: 'owner/repo:path' or 'owner/repo/path' ('owner/repo' for the whole repository). Or give repo and path separately."),
  repo: repoField.optional().describe("The repository to watch (owner/name or a registered repository), when root is not given."),
  path: z.string().max(MAX_PATH_CHARS).optional().describe("The folder or file in the repository to watch; '' or '/' is the whole repository."),
  ref: z.string().max(256).optional().describe("The branch whose pushes count. Defaults to the repository's default branch (followed if it changes)."),
  prefix: z.string().max(MAX_PATH_CHARS).optional().describe("Store folder the watched files land in; defaults to their repository paths, as add does."),
  enable: z.boolean().default(true).describe("true (default) starts the watch and imports the watched files now; false removes it."),
});

type Params = z.output<typeof params>;

const WATCH_INSTEAD = "Watch a GitHub repository path instead: root 'owner/repo:folder', or repo (a registered repository or owner/name) and path; every push to it re-imports the files that changed.";

/** root and repo/path as one target; where both are given they must agree. */
function target(p: Params): WatchTarget {
  let repo = p.repo;
  let path = p.path;
  if (p.root !== undefined) {
    if (isLocalPath(p.root) || /^\.\.?[\\/]/.test(p.root)) {
      throw noLocalFilesystem(`watch cannot follow ${quotedPath(p.root)} on your machine`, WATCH_INSTEAD);
    }
    const colon = p.root.indexOf(":");
    const [head, tail] = colon >= 0 ? [p.root.slice(0, colon), p.root.slice(colon + 1)] : [p.root, ""];
    const segments = head.split("/").filter((s) => s !== "");
    if (segments.length < 2 || (colon >= 0 && segments.length !== 2)) {
      throw invalidInput(`root '${excerpt(p.root)}' does not name a repository`, "Write root as 'owner/repo:path' or 'owner/repo/path', e.g. 'octocat/docs:guide'.");
    }
    const rootRepo = `${segments[0]}/${segments[1]}`;
    const rootPath = colon >= 0 ? tail : segments.slice(2).join("/");
    if (repo !== undefined && repo.toLowerCase() !== rootRepo.toLowerCase()) {
      throw invalidInput(`root names ${excerpt(rootRepo)} but repo is ${excerpt(repo)}`, "Give root or repo, or make them name the same repository.");
    }
    if (path !== undefined && relativePath(path, "path") !== relativePath(rootPath, "root")) {
      throw invalidInput("root and path name different paths", "Give the path in root or in path, not both.");
    }
    repo = rootRepo;
    path = rootPath;
  }
  if (repo === undefined) {
    if (path !== undefined && isLocalPath(path)) throw noLocalFilesystem(`watch cannot follow ${quotedPath(path)} on your machine`, WATCH_INSTEAD);
    throw invalidInput("watch needs root or repo", "Pass root ('owner/repo:path'), or repo and path.");
  }
  return { session: p.session ?? "", repo, path: path ?? "", ref: p.ref ?? "", prefix: p.prefix };
}

export const watchOp = defineOp({
  name: "watch",
  category: "session",
  description: `Watch a GitHub repository folder or file: its files are imported now, and every push to the branch re-imports the files that changed and deletes the documents of removed ones (up to ${PUSH_MAX_FILES} files a push; the rest on the next). enable false removes the watch. At most ${MAX_WATCHES} watches per tenant.`,
  params,
  async run(ctx, p) {
    // A watch belongs to the caller's current session unless it names one.
    const t = target({ ...p, session: p.session ?? (await currentSession(ctx))?.name });
    if (!p.enable) {
      const removed = await disableWatch(ctx, t);
      return { enabled: false, removed: removed.length, watches: removed };
    }
    const { watch, sync } = await enableWatch(ctx, t);
    return { enabled: true, watch, sync: { ...sync.import, deleted: sync.deleted, note: sync.note } };
  },
});
