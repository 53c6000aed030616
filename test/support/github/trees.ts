/**
 * GitHub's Git Data API over a FakeRepo: trees (of whole commits and of their folders, by their own
 * sha, recursive only when asked) and blobs, as the document store's GitHub import reads them.
 */
import { sha256Hex } from "../../../src/db/ids";
import { errorBody, example, type FakeGitHub } from "./fake";
import type { FakeRepo } from "./fake-repo";

const enc = (s: string) => new TextEncoder().encode(s);

function b64(text: string): string {
  let bin = "";
  for (const b of enc(text)) bin += String.fromCharCode(b);
  return btoa(bin);
}

const hex40 = async (text: string) => (await sha256Hex(text)).slice(0, 40);

/**
 * FakeRepo answers tree listings of whole commits only; GitHub also lists subtrees by their own
 * sha, and only recurses when asked. This serves both, and blobs, from the same repository.
 */
export function serveTreesAndBlobs(gh: FakeGitHub, repo: FakeRepo): void {
  const dirs = new Map<string, { root: string; dir: string }>();
  gh.on("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", async (req) => {
    const sha = req.path.tree_sha!;
    const at = repo.trees.has(sha) ? { root: sha, dir: "" } : dirs.get(sha);
    if (!at) return { status: 404, body: errorBody("Not Found") };
    const recursive = req.query.recursive !== undefined;
    const entries = new Map<string, Record<string, unknown>>();
    for (const [path, blob] of repo.trees.get(at.root)!) {
      if (at.dir !== "" && !path.startsWith(`${at.dir}/`)) continue;
      const rel = at.dir === "" ? path : path.slice(at.dir.length + 1);
      const parts = rel.split("/");
      const folders = recursive ? parts.length - 1 : Math.min(1, parts.length - 1);
      for (let i = 1; i <= folders; i++) {
        const d = parts.slice(0, i).join("/");
        const full = at.dir === "" ? d : `${at.dir}/${d}`;
        const dsha = await hex40(`${at.root}:${full}`);
        dirs.set(dsha, { root: at.root, dir: full });
        entries.set(d, { path: d, mode: "040000", type: "tree", sha: dsha, url: `https://api.github.test/t/${dsha}` });
      }
      if (recursive || parts.length === 1) {
        const mode = repo.modeOf(at.root, path);
        entries.set(rel, { path: rel, mode, type: mode === "160000" ? "commit" : "blob", sha: blob, size: enc(repo.blobs.get(blob)!).length, url: `https://api.github.test/b/${blob}` });
      }
    }
    return { body: example("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", { sha, tree: [...entries.values()], truncated: false }) };
  });
  gh.on("GET /repos/{owner}/{repo}/git/blobs/{file_sha}", (req) => {
    const content = repo.blobs.get(req.path.file_sha!);
    if (content === undefined) return { status: 404, body: errorBody("Not Found") };
    return { body: example("GET /repos/{owner}/{repo}/git/blobs/{file_sha}", { sha: req.path.file_sha, content: b64(content), encoding: "base64", size: enc(content).length }) };
  });
}
