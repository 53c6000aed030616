/**
 * The language-model review tools' rig, shared by their tests (review_changes, review_git_diff,
 * review_auto) and review_diff's LLM stage: a world whose Workers AI binding answers as the test
 * scripts, the model's findings on hono 79677607, and the fake GitHub serving that diff.
 */
import type { AiChatInput } from "../../src/llm/workers-ai";
import { fileStatus, parseUnifiedDiff } from "../../src/review/unified-diff/parse";
import requestDiff from "../fixtures/review/llm/hono-request-param-79677607.diff?raw";
import { example, exampleItem, FakeGitHub } from "./github/fake";
import { connectGitHub } from "./github/tenant";
import { ScriptedAi, withAi } from "./llm-stand-in";
import { newWorld } from "./helpers";

export const JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJtZXNzYWdlIjoiaGVsbG8gd29ybGQifQ.B54pAqIiLbu170tGQ1rY06Twv__0qSHTA0ioQPIOvFE";

interface ModelFinding {
  id: string;
  priority: number;
  category: string;
  file: string;
  start: number;
  end?: number;
  confidence?: number;
}
const finding = (f: ModelFinding) => ({
  id: f.id,
  title: `Finding ${f.id}`,
  body: "Why it matters.",
  confidence_score: f.confidence ?? 0.9,
  priority: f.priority,
  category: f.category,
  code_location: { file_path: f.file, line_range: { start: f.start, end: f.end ?? f.start } },
  suggestion: { description: "Guard the access.", can_auto_fix: false },
});
export const review = (findings: unknown[], verdict = "needs attention") => JSON.stringify({ findings, overall_correctness: verdict, overall_explanation: "Reviewed.", overall_confidence_score: 0.8 });

/** On hono 79677607: src/request.ts changed lines 104 and 112; line 114 keeps the unguarded access. */
export const requestFindings = [
  finding({ id: "F1", priority: 1, category: "correctness", file: "src/request.ts", start: 114 }),
  finding({ id: "F2", priority: 0, category: "correctness", file: "src/request.ts", start: 114 }),
  finding({ id: "F3", priority: 2, category: "style", file: "src/request.ts", start: 103, end: 105 }),
  finding({ id: "F4", priority: 3, category: "documentation", file: "src/request.ts", start: 112, confidence: 0.5 }),
  finding({ id: "F5", priority: 1, category: "maintainability", file: "src/request.test.ts", start: 42, end: 48 }),
  { id: "F6", title: "no category or location", priority: 1, confidence_score: 0.9 },
];

export async function world(prefix: string, reply: (input: AiChatInput) => unknown = () => review([], "patch is correct")) {
  const w = await newWorld(prefix, { start: "2026-06-01T12:00:00.000Z" });
  const ai = new ScriptedAi(reply);
  return { w, ai, ctx: withAi(w.ctx, ai) };
}

/** GitHub's file entries for a diff's files, as the pull request, commit and compare APIs list them. */
function githubFiles(diff: string, op: "pulls" | "compare") {
  const base =
    op === "pulls"
      ? exampleItem<Record<string, unknown>>("GET /repos/{owner}/{repo}/pulls/{pull_number}/files")
      : example<{ files: Record<string, unknown>[] }>("GET /repos/{owner}/{repo}/compare/{basehead}").files[0]!;
  return parseUnifiedDiff(diff).files.map((f) => {
    const at = f.section.indexOf("\n@@");
    const { patch: _p, previous_filename: _prev, ...rest } = base;
    const status = fileStatus(f);
    return {
      ...rest,
      filename: f.newPath,
      status: status === "deleted" ? "removed" : status,
      additions: f.additions,
      deletions: f.deletions,
      changes: f.additions + f.deletions,
      ...(at >= 0 ? { patch: f.section.slice(at + 1) } : {}),
      ...(status === "renamed" ? { previous_filename: f.oldPath } : {}),
    };
  });
}

const repoBody = (over: Record<string, unknown> = {}) => example("GET /repos/{owner}/{repo}", { default_branch: "trunk", language: "TypeScript", source: { language: "TypeScript" }, ...over });

export async function gitWorld(prefix: string, reply?: (input: AiChatInput) => unknown) {
  const { w, ai, ctx } = await world(prefix, reply);
  const gh = new FakeGitHub();
  const connected = await connectGitHub(ctx, gh);
  gh.on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }))
    .on("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", () => ({ body: githubFiles(requestDiff, "pulls") }))
    .on("GET /repos/{owner}/{repo}/commits/{ref}", (req) => ({ body: example("GET /repos/{owner}/{repo}/commits/{ref}", { sha: req.path.ref, files: githubFiles(requestDiff, "compare") }) }))
    .on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ body: example("GET /repos/{owner}/{repo}/compare/{basehead}", { files: githubFiles(requestDiff, "compare") }) }));
  return { w, ai, gh, ctx: connected };
}
