/**
 * run_static_analysis's rig, shared with review_diff's static stage: the fake GitHub serving what it
 * ran for a commit (hono's typecheck check run with its real tsc errors, Express's Semgrep alerts
 * from code scanning), laid onto GitHub's own examples.
 */
import type { Ctx } from "../../src/core/context";
import scanning from "../fixtures/review/github/code-scanning-express.json";
import tscRun from "../fixtures/review/github/hono-d4853a8-tsc.json";
import { example, exampleItem, FakeGitHub } from "./github/fake";
import { connectGitHub } from "./github/tenant";
import { newWorld, type World } from "./helpers";

export const RUNS = "GET /repos/{owner}/{repo}/commits/{ref}/check-runs";
export const ANNOTATIONS = "GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations";
export const ALERTS = "GET /repos/{owner}/{repo}/code-scanning/alerts";
export const COMMIT = "GET /repos/{owner}/{repo}/commits/{ref}";
export const REPO = "GET /repos/{owner}/{repo}";

export const HONO_SHA = tscRun.commit;
export const EXPRESS_SHA = scanning.commit;

export type Json = Record<string, any>;

/** The fixture's tsc lines as check-run annotations: the setup-node problem matcher's groups laid onto GitHub's example annotation. */
export function tscAnnotations(): Json[] {
  const re = new RegExp(tscRun.problem_matcher.regexp);
  const level: Record<string, string> = { error: "failure", warning: "warning", info: "notice" };
  return tscRun.tsc_output.map((line) => {
    const m = re.exec(line)!;
    return exampleItem(ANNOTATIONS, {
      path: m[1],
      start_line: Number(m[2]),
      end_line: Number(m[2]),
      start_column: Number(m[3]),
      end_column: Number(m[3]),
      annotation_level: level[m[4]!],
      title: `TS${m[5]}`,
      message: m[6],
      raw_details: null,
    });
  });
}

let nextRunId = 100;
/** GitHub's example check run, renamed, with `annotations` annotations. */
export function checkRun(name: string, annotations: number, over: Json = {}): Json {
  const id = nextRunId++;
  const base = example<{ check_runs: Json[] }>(RUNS).check_runs[0]!;
  return { ...base, id, name, head_sha: HONO_SHA, conclusion: annotations > 0 ? "failure" : "success", output: { ...(base.output as Json), annotations_count: annotations }, ...over };
}

export const runsReply = (runs: Json[], total = runs.length) => ({ body: example(RUNS, { total_count: total, check_runs: runs }) });

/** GitHub's example alert list, with the fixture's Semgrep alerts in front. */
export function alertList(): Json[] {
  const examples = example<Json[]>(ALERTS);
  return [...scanning.semgrep_alerts.map((a) => ({ ...examples[0], ...a })), ...examples];
}

export async function setup(prefix = "rvstatic"): Promise<{ w: World; gh: FakeGitHub; ctx: Ctx }> {
  const w = await newWorld(prefix, { start: "2026-06-01T12:00:00.000Z" });
  const gh = new FakeGitHub();
  const ctx = await connectGitHub(w.ctx, gh);
  gh.on(REPO, () => ({ body: example(REPO, { default_branch: "main", language: "TypeScript", source: { language: "TypeScript" } }) }));
  gh.on(COMMIT, (r) => ({ body: example(COMMIT, { files: [], sha: /^[0-9a-f]{40}$/.test(r.path.ref!) ? r.path.ref : r.path.owner === "expressjs" ? EXPRESS_SHA : HONO_SHA }) }));
  return { w, gh, ctx };
}

/** hono at the parent of d4853a8: a typecheck run with the 37 real TS1323 errors, and GitHub's example spell-check run. */
export function honoTypecheck(gh: FakeGitHub) {
  const typecheck = checkRun("typecheck", tscRun.tsc_output.length);
  const readme = checkRun("mighty_readme", 2);
  gh.on(RUNS, () => runsReply([typecheck, readme]));
  gh.on(ANNOTATIONS, (r) => ({ body: Number(r.path.check_run_id) === typecheck.id ? tscAnnotations() : example(ANNOTATIONS, undefined) }));
  return { typecheck, readme };
}
