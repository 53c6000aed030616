/**
 * check_invariants' rig, shared with review_diff's invariants stage and the repo-default tests: a
 * world connected to the fake GitHub, and GitHub's answers for an invariants file and a repository.
 */
import { example, FakeGitHub } from "./github/fake";
import { connectGitHub } from "./github/tenant";
import { newWorld } from "./helpers";

export const SHA = "0123456789abcdef0123456789abcdef01234567";
export const REPO = "octocat/Hello-World";

const b64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));
export const fileBody = (text: string, path = ".review-invariants.yml") =>
  example("GET /repos/{owner}/{repo}/contents/{path}", { type: "file", encoding: "base64", name: path.split("/").pop(), path, content: b64(text), size: text.length });
export const repoBody = () => example("GET /repos/{owner}/{repo}", { default_branch: "main", language: "TypeScript", source: { language: "TypeScript" } });

export async function setup(prefix = "inv") {
  const w = await newWorld(prefix, { start: "2026-06-01T12:00:00.000Z" });
  const gh = new FakeGitHub();
  const ctx = await connectGitHub(w.ctx, gh);
  return { w, gh, ctx };
}
