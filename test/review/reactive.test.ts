/**
 * Reactive pull-request review sessions inside workerd: reactive_review_pr hands a session to its
 * Durable Object, whose alarms (driven here with runDurableObjectAlarm) run one step each against
 * the fake GitHub, which answers from real diffs (test/fixtures/review/reactive). Also: pause and
 * resume, a retry after a server error, failures, telemetry, pull_request webhooks, publishing a
 * pull-request review, unknown and foreign sessions, and bad input.
 */
import definitions from "@octokit/webhooks-examples";
import { sign } from "@octokit/webhooks-methods";
import { createExecutionContext, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setWebhookSecretSql } from "../../src/git/operator";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import type { Ctx } from "../../src/core/context";
import { commentableLines, publishReview } from "../../src/review/reactive-sessions/publish";
import { type BatchReviewer, reviewSessionStub, sessionGitHub } from "../../src/review/reactive-sessions/runner";
import { type BatchResult, mergeBatches, parseChangedFiles, retryDelayMs } from "../../src/review/reactive-sessions/plan";
import { updateReviewSettings } from "../../src/review/settings/model";
import { sessionListQuery } from "../../src/review/reactive/model";
import type { Finding } from "../../src/review/pipeline/types";
import { reviewDiffBatchReviewer, useBatchReviewer } from "../../src/review/reactive-sessions/batch-reviewer";
import { isSafeRepoPath } from "../../src/git/tokens";
import { diffEntries, type DiffEntry, pullRequestFile } from "../support/github/diff-entries";
import { errorBody, example, exampleItem, FAKE_API, FakeGitHub, type FakeReply, type FakeRequest } from "../support/github/fake";
import { connectGitHub, TEST_CREDENTIALS_KEY } from "../support/github/tenant";
import { call, count, fails, MINUTE, newWorld, ok, refusedWithoutWrites, type Structured, type TestClock } from "../support/helpers";
import jsxDiff from "../fixtures/review/reactive/hono-3feb3551.diff?raw";
import requestDiff from "../fixtures/review/reactive/hono-79677607.diff?raw";

const OWNER = "honojs";
const NAME = "hono";
const REPO = `${OWNER}/${NAME}`;
const JSX_SHA = "3feb3551d46de1f633e82253f12cf1117316be93";
const JSX_PARENT = "5d911d2ab7bcb2adb2e974ddd5b17742fb5a0bca";
const REQ_SHA = "7967760748503b50de7c315fe3aa76666a8e6cab";
const HOUR = 3_600_000;

// ---------------------------------------------------------------------------------------------
// Fixtures: a real `git show` diff as GitHub's diff entries

const JSX_FILES = diffEntries(jsxDiff);
const REQ_FILES = diffEntries(requestDiff);

const apiFile = (f: DiffEntry, sha: string) => pullRequestFile(REPO, f, sha);

// ---------------------------------------------------------------------------------------------
// A reviewer that reads the diff it is given: a LOW finding on every added line that uses
// optional chaining, and an INFO finding on line 1 of the batch's first file (not a diff line).

interface ReviewCall {
  tenantId: string;
  actor: string;
  diff: string;
  changedFiles: string[];
  headSha: string;
  repo: string;
}
let calls: ReviewCall[] = [];

const finding = (id: string, severity: Finding["severity"], file: string, line: number, title: string): Finding => ({
  id,
  severity,
  category: "correctness",
  confidence: 0.9,
  title,
  location: { file, startLine: line },
  evidence: [title],
  impact: "Reviewers should look.",
  recommendation: "Check it.",
});

const testReviewer: BatchReviewer = async (ctx, input) => {
  calls.push({ tenantId: ctx.tenantId, actor: ctx.actorName, diff: input.diff, changedFiles: input.changedFiles, headSha: input.headSha, repo: `${input.repo.owner}/${input.repo.name}` });
  const findings: Finding[] = [finding("TST001", "INFO", input.changedFiles[0]!, 1, "Batch reviewed")];
  let file = "";
  let line = 0;
  for (const text of input.diff.split("\n")) {
    if (text.startsWith("+++ ")) file = text.slice(6);
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)/.exec(text);
    if (hunk) line = Number(hunk[1]);
    else if (text.startsWith("+") && !text.startsWith("+++")) {
      if (text.includes("?.")) findings.push(finding("OPT001", "LOW", file, line, "Optional chaining may hide a missing value"));
      line++;
    } else if (text.startsWith(" ")) line++;
  }
  const tests = input.changedFiles.filter((f) => f.includes(".test.")).length;
  return {
    findings,
    risk_score: tests === input.changedFiles.length ? 1 : 3,
    classification: tests === input.changedFiles.length ? "refactor" : "bugfix",
    summary: `${input.changedFiles.length} file(s)`,
  };
};

// ---------------------------------------------------------------------------------------------
// Rig

// The session's object runs with the Worker's own env: point it at the fake GitHub, and space
// steps an hour apart so no alarm fires by itself while a test drives them.
const saved = { api: env.GITHUB_API_URL, key: env.GITHUB_CREDENTIALS_KEY, gap: env.REVIEW_STEP_GAP_MS };
let previousReviewer: BatchReviewer | null = null;
beforeEach(() => {
  Object.assign(env, { GITHUB_API_URL: "https://api.github.test", GITHUB_CREDENTIALS_KEY: TEST_CREDENTIALS_KEY, REVIEW_STEP_GAP_MS: String(HOUR) });
  previousReviewer = useBatchReviewer(testReviewer);
  calls = [];
});
afterEach(() => {
  Object.assign(env, { GITHUB_API_URL: saved.api, GITHUB_CREDENTIALS_KEY: saved.key, REVIEW_STEP_GAP_MS: saved.gap });
  useBatchReviewer(previousReviewer);
});

interface Rig {
  ctx: Ctx;
  gh: FakeGitHub;
  slug: string;
  clock: TestClock;
}

async function rig(prefix: string): Promise<Rig> {
  const w = await newWorld(prefix, { start: new Date().toISOString() });
  const gh = new FakeGitHub();
  gh.on("GET /repos/{owner}/{repo}/commits/{ref}", (req) => {
    const ref = req.path.ref!;
    const sha = [JSX_SHA, REQ_SHA].find((s) => s.startsWith(ref));
    return sha ? { body: example("GET /repos/{owner}/{repo}/commits/{ref}", { sha, files: [] }) } : { status: 404, body: errorBody("No commit found for SHA: " + ref) };
  });
  gh.on("GET /repos/{owner}/{repo}/compare/{basehead}", (req) => {
    const head = req.path.basehead!.split("...")[1];
    const files = head === JSX_SHA ? JSX_FILES : REQ_FILES;
    return { body: example("GET /repos/{owner}/{repo}/compare/{basehead}", { files: files.map((f) => apiFile(f, head!)) }) };
  });
  return { ctx: await connectGitHub(w.ctx, gh), gh, slug: w.slug, clock: w.clock };
}

/** A pull request #7 whose head is `sha` and whose files are `files`, 100 a page as GitHub pages them. */
function servePull(gh: FakeGitHub, sha: string, files: DiffEntry[], number = 7) {
  gh.on("GET /repos/{owner}/{repo}/pulls/{pull_number}", () => ({
    body: example("GET /repos/{owner}/{repo}/pulls/{pull_number}", {
      number,
      head: { sha },
      base: { ref: "main" },
      // GitHub's own example lists a team without the `type` its schema requires; a pull request without requested teams is as real.
      requested_teams: [],
    }),
  }));
  gh.on("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", (req) => {
    const page = Number(req.query.page ?? "1");
    const perPage = Number(req.query.per_page ?? "30");
    return { body: files.slice((page - 1) * perPage, page * perPage).map((f) => apiFile(f, sha)) };
  });
}

const startJsx = (r: Rig, extra: Record<string, unknown> = {}) =>
  ok(r.ctx, "reactive_review_pr", { repo: REPO, commit_hash: JSX_SHA.slice(0, 12), base_ref: JSX_PARENT, changed_files: JSON.stringify(JSX_FILES.map((f) => f.filename)), ...extra });

const status = (r: Rig, id: string) => ok(r.ctx, "get_review_status", { session_id: id });
const telemetry = (r: Rig, id: string) => ok(r.ctx, "get_review_telemetry", { session_id: id });
const stubOf = (r: Rig, id: string) => reviewSessionStub(env, r.ctx.tenantId, id);
const alarmAt = (r: Rig, id: string) => runInDurableObject(stubOf(r, id), (_o, state) => state.storage.getAlarm());
const row = (tenantId: string, id: string) => env.DB.prepare(`SELECT * FROM review_sessions WHERE tenant_id = ? AND id = ?`).bind(tenantId, id).first<Structured>();
const sessionsOf = (tenantId: string) =>
  env.DB.prepare(`SELECT id, status, commit_hash, pull_number, source, created_by, error FROM review_sessions WHERE tenant_id = ? ORDER BY created_at, id`)
    .bind(tenantId)
    .all<Structured>()
    .then((x) => x.results);

/** Runs the session's alarms until it is no longer executing. */
async function drive(r: Rig, id: string, max = 20): Promise<Structured> {
  for (let i = 0; i < max; i++) {
    const s = await status(r, id);
    if (s.session.status !== "executing") return s;
    expect(await runDurableObjectAlarm(stubOf(r, id))).toBe(true);
  }
  throw new Error(`session ${id} did not settle in ${max} alarms`);
}

// ---------------------------------------------------------------------------------------------

describe("reactive_review_pr", () => {
  describe("the plan's pure rules", () => {
    it("takes changed_files as a JSON array string or comma-separated, and refuses what the reference refuses", () => {
      expect(parseChangedFiles('["src/a.ts", "src/b.ts", "src/a.ts"]', isSafeRepoPath)).toEqual(["src/a.ts", "src/b.ts"]);
      expect(parseChangedFiles(" src/a.ts , docs/b.md ", isSafeRepoPath)).toEqual(["src/a.ts", "docs/b.md"]);
      expect(parseChangedFiles("[oops", isSafeRepoPath)).toBe("changed_files must be valid CSV or JSON array string");
      expect(parseChangedFiles('[{"a":1}]', isSafeRepoPath)).toBe("changed_files[0] must be a string path");
      expect(parseChangedFiles('["a", 3]', isSafeRepoPath)).toBe("changed_files[1] must be a string path");
      expect(parseChangedFiles("a,,b", isSafeRepoPath)).toBe("changed_files[1] must be a non-empty path");
      expect(parseChangedFiles("src/../etc/passwd", isSafeRepoPath)).toMatch(/not a relative repository path/);
      expect(parseChangedFiles("[]", isSafeRepoPath)).toBe("changed_files must include at least one file path");
      expect(parseChangedFiles(JSON.stringify(Array.from({ length: 3001 }, (_, i) => `f${i}`)), isSafeRepoPath)).toMatch(/maximum entries \(3000\)/);
    });

    it("knows which new-side lines of a real patch a review comment may point at", () => {
      const lines = commentableLines(REQ_FILES.find((f) => f.filename === "src/request.ts")!.patch);
      // Hunks at +101,7 and +109,7: context and added lines, never the removed ones.
      expect([...lines]).toEqual([101, 102, 103, 104, 105, 106, 107, 109, 110, 111, 112, 113, 114, 115]);
    });

    it("merges batches: one finding per id and place (the most severe), the highest risk, the class covering most files", () => {
      const f = (id: string, severity: Finding["severity"], file: string, line: number) => ({ ...finding(id, severity, file, line, id), inline: false });
      const batches: BatchResult[] = [
        { files: ["a.ts"], findings: [f("X", "LOW", "a.ts", 3), f("Y", "HIGH", "a.ts", 9)], risk_score: 2, classification: "feature", summary: "" },
        { files: ["b.ts", "c.ts"], findings: [f("X", "MEDIUM", "a.ts", 3), f("X", "LOW", "b.ts", 3)], risk_score: 4, classification: "bugfix", summary: "" },
      ];
      const merged = mergeBatches(batches, "abc", ["w"]);
      expect(merged.findings.map((x) => `${x.severity} ${x.id} ${x.location.file}`)).toEqual(["HIGH Y a.ts", "MEDIUM X a.ts", "LOW X b.ts"]);
      expect(merged).toMatchObject({ risk_score: 4, classification: "bugfix", files_reviewed: 3, batches: 2, findings_total: 3, warnings: ["w"] });
      expect(merged.summary).toBe("Reviewed 3 file(s) in 2 batch(es) at abc. Classified as bugfix. Risk 4/5. 3 finding(s) (1 HIGH, 1 MEDIUM, 1 LOW).");
    });

    it("backs off 2 s, 4 s, … up to a minute, and waits for a rate limit's reset", () => {
      expect([1, 2, 3, 10].map((n) => retryDelayMs(n, 0))).toEqual([2000, 4000, 8000, 60_000]);
      expect(retryDelayMs(1, 1000, 31_000)).toBe(30_000);
      expect(retryDelayMs(1, 1000, 999_999_999)).toBe(15 * 60_000);
    });
  });

  describe("a session from start to result", () => {
    it("plans a step per batch of 5 files and a merge, runs one step per alarm, and stores the merged result", async () => {
      const r = await rig("rv-run");
      const started = await startJsx(r, { title: "fix(jsx): allow a function component to return an array", author: "natsuki-engr", additions: 239, deletions: 26 });
      expect(started.session_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(started).toMatchObject({ status: "executing", total_steps: 3, commit_hash: JSX_SHA, replaced_sessions: [], warnings: [] });
      expect(started.message).toBe("Review session started with 3 steps. Execution running in background. Use get_review_status to monitor progress.");
      const id = started.session_id as string;

      const before = await status(r, id);
      expect(before.session).toMatchObject({
        status: "executing",
        repo: REPO,
        pull_number: null,
        base_ref: JSX_PARENT,
        current_step: 1,
        total_steps: 3,
        source: "tool",
        title: "fix(jsx): allow a function component to return an array",
        author: "natsuki-engr",
      });
      expect(before.progress).toEqual({ completed_steps: 0, total_steps: 3, percentage: 0 });
      expect(before.result).toBeUndefined();
      // The first step waits for the alarm (the step gap here); nothing ran yet.
      expect(await alarmAt(r, id)).toBeGreaterThan(Date.now() + HOUR / 2);
      expect(calls).toHaveLength(0);

      expect(await runDurableObjectAlarm(stubOf(r, id))).toBe(true);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.changedFiles).toEqual(JSX_FILES.slice(0, 5).map((f) => f.filename));
      expect(calls[0]).toMatchObject({ tenantId: r.ctx.tenantId, actor: "agent", headSha: JSX_SHA, repo: REPO });
      // The reviewer gets a unified diff rebuilt from GitHub's patches: headers and every hunk.
      for (const f of JSX_FILES.slice(0, 5)) {
        expect(calls[0]!.diff).toContain(`diff --git a/${f.filename} b/${f.filename}\n--- a/${f.filename}\n+++ b/${f.filename}\n${f.patch}\n`);
      }
      expect((await status(r, id)).progress).toEqual({ completed_steps: 1, total_steps: 3, percentage: 33 });

      expect(await runDurableObjectAlarm(stubOf(r, id))).toBe(true);
      expect(calls[1]!.changedFiles).toEqual(JSX_FILES.slice(5).map((f) => f.filename));
      expect(await runDurableObjectAlarm(stubOf(r, id))).toBe(true);
      expect(calls).toHaveLength(2);

      const done = await status(r, id);
      expect(done.session).toMatchObject({ status: "completed", current_step: null, error: null, review_url: null });
      expect(done.progress).toEqual({ completed_steps: 3, total_steps: 3, percentage: 100 });
      const result = done.result;
      expect(result).toMatchObject({ reviewed_commit: JSX_SHA, risk_score: 3, classification: "bugfix", files_reviewed: 8, batches: 2, warnings: [] });
      // One TST001 per batch (each on its first file) and an OPT001 per added line with `?.`.
      const optional = JSX_FILES.flatMap((f) =>
        f.patch
          .split("\n")
          .filter((l) => l.startsWith("+") && l.includes("?."))
          .map(() => f.filename),
      );
      expect(result.findings_total).toBe(2 + optional.length);
      expect(result.findings.filter((x: Finding) => x.id === "TST001").map((x: Finding) => x.location.file)).toEqual([JSX_FILES[0]!.filename, JSX_FILES[5]!.filename]);
      expect(result.findings.every((x: Structured) => x.inline === (x.id === "OPT001"))).toBe(true);
      expect(done.findings_count).toBe(result.findings_total);
      expect(result.summary).toMatch(/^Reviewed 8 file\(s\) in 2 batch\(es\) at 3feb3551d46d\. Classified as bugfix\. Risk 3\/5\./);

      const stored = await row(r.ctx.tenantId, id);
      expect(stored).toMatchObject({
        status: "completed",
        repo: "honojs/hono",
        commit_hash: JSX_SHA,
        source: "tool",
        total_steps: 3,
        completed_steps: 3,
        findings_count: result.findings_total,
        error: null,
      });
      expect(JSON.parse(stored!.result)).toEqual(result);
      expect(stored!.finished_at).not.toBeNull();
      // What is left is the cleanup of the object's copy, a week on.
      expect(await alarmAt(r, id)).toBeGreaterThan(Date.now() + 6 * 24 * HOUR);
      // Only the tool's check and one comparison per review step went to GitHub.
      expect(r.gh.count("GET /repos/{owner}/{repo}/commits/{ref}")).toBe(1);
      expect(r.gh.count("GET /repos/{owner}/{repo}/compare/{basehead}")).toBe(2);
    });

    it("answers from the row once the object has dropped an ended session", async () => {
      const r = await rig("rv-drop");
      const id = (await startJsx(r)).session_id as string;
      const done = await drive(r, id);
      const tele = await telemetry(r, id);
      // The cleanup alarm, as if a week had passed.
      await runInDurableObject(stubOf(r, id), async (_o, state) => {
        const s = (await state.storage.get<Structured>("state"))!;
        await state.storage.put("state", { ...s, finishedAt: "2000-01-01T00:00:00.000Z" });
      });
      expect(await runDurableObjectAlarm(stubOf(r, id))).toBe(true);
      expect(await runInDurableObject(stubOf(r, id), async (_o, state) => (await state.storage.list()).size)).toBe(0);
      const after = await status(r, id);
      expect(after.session).toEqual(done.session);
      expect(after.result).toEqual(done.result);
      expect((await telemetry(r, id)).telemetry.steps).toEqual(tele.telemetry.steps);
    });

    it("reviews batches side by side when parallel, lowering max_workers to what one alarm may run", async () => {
      const r = await rig("rv-par");
      const id = (await startJsx(r, { parallel: true, max_workers: 2 })).session_id as string;
      expect(await runDurableObjectAlarm(stubOf(r, id))).toBe(true);
      expect(calls).toHaveLength(2);
      expect((await status(r, id)).progress.completed_steps).toBe(2);
      expect((await drive(r, id)).session.status).toBe("completed");
      expect((await telemetry(r, id)).reactive_config.workers).toBe(2);

      const wide = await startJsx(r, { parallel: true, max_workers: 10 });
      expect(wide.warnings).toEqual(["max_workers 10 was lowered to 4: one alarm runs at most 4 review steps side by side."]);
      const serial = await startJsx(r, { max_workers: 3 });
      expect(serial.warnings).toEqual(["max_workers applies only with parallel: true; the batches are reviewed one at a time."]);
    });
  });

  describe("retries and failures", () => {
    it("retries a step after a GitHub server error, with backoff, and records both attempts", async () => {
      const r = await rig("rv-retry");
      const real = r.gh;
      let failures = 1;
      const compare = (req: FakeRequest) => {
        if (failures-- > 0) return { status: 502, body: errorBody("Server Error") };
        const files = JSX_FILES.map((f) => apiFile(f, JSX_SHA));
        return { body: example("GET /repos/{owner}/{repo}/compare/{basehead}", { files, url: `https://api.github.com/repos/${REPO}/compare/${req.path.basehead}` }) };
      };
      real.on("GET /repos/{owner}/{repo}/compare/{basehead}", compare);
      const id = (await startJsx(r)).session_id as string;

      expect(await runDurableObjectAlarm(stubOf(r, id))).toBe(true);
      const mid = await telemetry(r, id);
      expect(mid.session_status).toBe("executing");
      expect(mid.telemetry.steps[0]).toMatchObject({ status: "pending", attempts: [{ outcome: "retry", retry_in_ms: 2000 }] });
      expect(mid.telemetry.steps[0].attempts[0].error).toMatch(/^github_unavailable: GitHub answered 502/);
      // The client made no waits of its own: one request, and the retry is the session's.
      expect(real.count("GET /repos/{owner}/{repo}/compare/{basehead}")).toBe(1);
      expect(calls).toHaveLength(0);

      const done = await drive(r, id);
      expect(done.session.status).toBe("completed");
      const t = await telemetry(r, id);
      expect(t.telemetry.retries).toBe(1);
      expect(t.telemetry.steps[0].attempts.map((a: Structured) => a.outcome)).toEqual(["retry", "ok"]);
    });

    it("fails the session after the last attempt, and at once on an error retrying cannot fix", async () => {
      const r = await rig("rv-fail");
      r.gh.on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ status: 503, body: errorBody("Service Unavailable") }));
      const id = (await startJsx(r)).session_id as string;
      const failed = await drive(r, id);
      expect(failed.session.status).toBe("failed");
      expect(failed.session.error).toMatch(/^Step 1 \(review_batch\) failed after 3 attempts: github_unavailable: GitHub answered 503/);
      expect(failed.session.current_step).toBe(1);
      const t = await telemetry(r, id);
      expect(t.telemetry.steps[0].attempts.map((a: Structured) => a.outcome)).toEqual(["retry", "retry", "failed"]);
      expect(t.telemetry.steps[0].attempts.map((a: Structured) => a.retry_in_ms ?? null)).toEqual([2000, 4000, null]);
      expect(t.telemetry.steps.slice(1).map((s: Structured) => s.status)).toEqual(["pending", "pending"]);
      const stored = await row(r.ctx.tenantId, id);
      expect(stored).toMatchObject({ status: "failed", error: failed.session.error });
      expect(JSON.parse(stored!.state).status).toBe("failed");

      r.gh.on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ status: 404, body: errorBody("Not Found") }));
      const gone = await drive(r, (await startJsx(r)).session_id);
      expect(gone.session.error).toMatch(/^Step 1 \(review_batch\) failed: github_not_found: Not found on GitHub: Not Found$/);
    });

    it("fails a review step with review_unavailable when no reviewer is wired in", async () => {
      const r = await rig("rv-noreviewer");
      useBatchReviewer(null);
      const id = (await startJsx(r)).session_id as string;
      const s = await drive(r, id);
      expect(s.session).toMatchObject({ status: "failed" });
      expect(s.session.error).toMatch(/^Step 1 \(review_batch\) failed: review_unavailable: /);
      // Nothing was fetched for a batch nobody can review.
      expect(r.gh.count("GET /repos/{owner}/{repo}/compare/{basehead}")).toBe(0);
    });

    it("reviews what has a patch and warns about the rest", async () => {
      const r = await rig("rv-missing");
      const id = (await ok(r.ctx, "reactive_review_pr", { repo: REPO, commit_hash: REQ_SHA, base_ref: "main", changed_files: "src/request.ts,src/not-in-diff.ts" })).session_id;
      const s = await drive(r, id);
      expect(s.session.status).toBe("completed");
      expect(calls[0]!.changedFiles).toEqual(["src/request.ts"]);
      expect(s.result.warnings).toEqual(["src/not-in-diff.ts: not among the files GitHub lists for this change; not reviewed"]);
      expect(s.result.files_reviewed).toBe(1);
    });
  });

  // ---------------------------------------------------------------------------------------------
  // Webhooks

  const TENANT_SECRET = "tenant-webhook-secret-reactive-0123";
  type Payload = Record<string, any>;

  /** GitHub's example pull_request delivery for `action`, moved to the test repository and pull request. */
  function prPayload(action: string, over: { sha?: string; draft?: boolean; number?: number } = {}): Payload {
    const def = (definitions as unknown as { name: string; examples: Payload[] }[]).find((d) => d.name === "pull_request")!;
    const p = structuredClone(def.examples.find((e) => e.action === action)!);
    const number = over.number ?? 7;
    return {
      ...p,
      number,
      repository: { ...p.repository, full_name: REPO, name: NAME, owner: { ...p.repository.owner, login: OWNER }, html_url: `https://github.com/${REPO}` },
      pull_request: { ...p.pull_request, number, draft: over.draft ?? false, head: { ...p.pull_request.head, sha: over.sha ?? REQ_SHA }, base: { ...p.pull_request.base, ref: "main" } },
    };
  }

  /** Posts a signed delivery to the tenant's webhook URL, waits for its processing, and returns its stored outcome. */
  async function deliver(slug: string, payload: Payload): Promise<Structured> {
    const body = JSON.stringify(payload);
    const delivery = crypto.randomUUID();
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`http://ledger.test/webhooks/github/${slug}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-github-event": "pull_request", "x-github-delivery": delivery, "x-hub-signature-256": await sign(TENANT_SECRET, body) },
        body,
      }),
      { ...env },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(202);
    return (await env.DB.prepare(`SELECT status, error FROM webhook_deliveries WHERE delivery_id = ?`).bind(delivery).first<Structured>())!;
  }

  async function webhookRig(prefix: string, reactive: boolean): Promise<Rig> {
    const r = await rig(prefix);
    await env.DB.prepare(await setWebhookSecretSql(r.ctx.tenantId, TENANT_SECRET, TEST_CREDENTIALS_KEY)).run();
    if (reactive) await updateReviewSettings(r.ctx, REPO, { reactive: true });
    servePull(r.gh, REQ_SHA, REQ_FILES);
    return r;
  }

  describe("pull_request webhooks", () => {
    it("starts a session for an opted-in repository: files listed from the pull request, reviewed, merged", async () => {
      const r = await webhookRig("rv-hook", true);
      await deliver(r.slug, prPayload("opened"));
      const [s] = await sessionsOf(r.ctx.tenantId);
      expect(s).toMatchObject({ status: "executing", commit_hash: REQ_SHA, pull_number: 7, source: "webhook" });
      const first = await status(r, s!.id);
      expect(first.session).toMatchObject({ total_steps: 3, title: prPayload("opened").pull_request.title, author: prPayload("opened").pull_request.user.login });
      expect((await telemetry(r, s!.id)).telemetry.steps.map((x: Structured) => x.kind)).toEqual(["list_files", "merge", "publish"]);

      expect(await runDurableObjectAlarm(stubOf(r, s!.id))).toBe(true);
      const listed = await telemetry(r, s!.id);
      expect(listed.telemetry.steps.map((x: Structured) => x.kind)).toEqual(["list_files", "review_batch", "merge", "publish"]);
      expect(listed.telemetry.steps[0].note).toBe("2 file(s) listed from pull request #7");

      const done = await drive(r, s!.id);
      expect(done.session.status).toBe("completed");
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ actor: "github", changedFiles: ["src/request.test.ts", "src/request.ts"], headSha: REQ_SHA });
      // Publishing is off by default: the step is skipped and says why.
      const t = await telemetry(r, s!.id);
      expect(t.telemetry.steps[3]).toMatchObject({ kind: "publish", status: "skipped", note: "publishing is off for this repository (review settings)" });
      expect(r.gh.count("POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews")).toBe(0);
    });

    it("does nothing for a repository that has not opted in", async () => {
      const r = await webhookRig("rv-hook-off", false);
      const d = await deliver(r.slug, prPayload("opened"));
      expect(d.status).toBe("ignored");
      expect(await sessionsOf(r.ctx.tenantId)).toEqual([]);
    });

    it("skips a draft until it is ready for review, and ignores actions that change no code", async () => {
      const r = await webhookRig("rv-hook-draft", true);
      const d = await deliver(r.slug, prPayload("opened", { draft: true }));
      expect(d.error).toBe("");
      expect(await sessionsOf(r.ctx.tenantId)).toEqual([]);
      expect(await count(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE tenant_id = ? AND status = 'processed'`, r.ctx.tenantId)).toBe(1);
      await deliver(r.slug, prPayload("labeled"));
      expect(await sessionsOf(r.ctx.tenantId)).toEqual([]);
      await deliver(r.slug, prPayload("ready_for_review"));
      expect(await sessionsOf(r.ctx.tenantId)).toHaveLength(1);
    });

    it("replaces the session when synchronize brings a new head, and reviews a head once", async () => {
      const r = await webhookRig("rv-hook-sync", true);
      await deliver(r.slug, prPayload("opened"));
      const [old] = await sessionsOf(r.ctx.tenantId);
      await deliver(r.slug, prPayload("reopened"));
      expect(await sessionsOf(r.ctx.tenantId)).toHaveLength(1);

      const newHead = "0123456789abcdef0123456789abcdef01234567";
      servePull(r.gh, newHead, REQ_FILES);
      await deliver(r.slug, prPayload("synchronize", { sha: newHead }));
      const [was, now] = await sessionsOf(r.ctx.tenantId);
      expect(was).toMatchObject({ id: old!.id, status: "cancelled" });
      expect(was!.error).toBe(`Superseded by session ${now!.id} (head 0123456789ab)`);
      expect(now).toMatchObject({ status: "executing", commit_hash: newHead });
      expect(await alarmAt(r, old!.id)).toBeGreaterThan(Date.now() + 6 * 24 * HOUR);
      expect((await status(r, old!.id)).session).toMatchObject({ status: "cancelled", error: was!.error });
      await refusedWithoutWrites(r.ctx, "resume_review", { session_id: old!.id }, "session_not_paused", () => sessionsOf(r.ctx.tenantId));
    });
  });

  // ---------------------------------------------------------------------------------------------
  // Publishing

  describe("publishing to the pull request", () => {
    const LIST = "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews";
    const POST = "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews";

    /**
     * The pull request's reviews as GitHub keeps them: a POST adds one (then answers with `after`'s
     * reply, or throws what it throws: an answer lost after GitHub created the review), and the list
     * answers them oldest first, `per_page` a page, with a Link to the last page.
     */
    function serveReviews(gh: FakeGitHub, after?: (req: FakeRequest, id: number) => FakeReply) {
      const reviews: Structured[] = [];
      const posted: FakeRequest[] = [];
      gh.on(LIST, (req) => {
        const page = Number(req.query.page ?? "1");
        const perPage = Number(req.query.per_page ?? "30");
        const last = Math.max(1, Math.ceil(reviews.length / perPage));
        return { body: reviews.slice((page - 1) * perPage, page * perPage), headers: { link: `<${FAKE_API}/repositories/1/pulls/7/reviews?per_page=${perPage}&page=${last}>; rel="last"` } };
      });
      gh.on(POST, (req) => {
        posted.push(req);
        const id = 4242 + reviews.length;
        const html_url = `https://github.com/${REPO}/pull/7#pullrequestreview-${id}`;
        reviews.push(exampleItem(LIST, { id, html_url, body: req.body!.body, commit_id: req.body!.commit_id }));
        return after ? after(req, id) : { body: example(POST, { id, html_url, commit_id: REQ_SHA }) };
      });
      return { reviews, posted };
    }

    async function pullSession(prefix: string, publish: boolean): Promise<{ r: Rig; id: string; posted: FakeRequest[]; reviews: Structured[] }> {
      const r = await rig(prefix);
      servePull(r.gh, REQ_SHA, REQ_FILES);
      await updateReviewSettings(r.ctx, REPO, { publish });
      const { posted, reviews } = serveReviews(r.gh);
      const started = await ok(r.ctx, "reactive_review_pr", {
        repo: REPO,
        commit_hash: REQ_SHA.slice(0, 10),
        base_ref: "main",
        changed_files: '["src/request.ts", "src/request.test.ts"]',
        pull_number: 7,
      });
      expect(started.total_steps).toBe(3);
      return { r, id: started.session_id, posted, reviews };
    }

    it("does not post twice when GitHub created the review but its answer was lost, nor when a retried step finds it", async () => {
      // The POST times out after GitHub created the review: the step looks and finds it.
      const lost = await pullSession("rv-pub-lost", true);
      serveReviews(lost.r.gh, () => {
        throw new TypeError("Network connection lost.");
      });
      const done = await drive(lost.r, lost.id);
      expect(done.session).toMatchObject({ status: "completed", error: null, review_url: `https://github.com/${REPO}/pull/7#pullrequestreview-4242` });
      expect(lost.r.gh.count(POST)).toBe(1);
      expect((await telemetry(lost.r, lost.id)).telemetry.steps[2]).toMatchObject({
        kind: "publish",
        status: "completed",
        note: "already published as review 4242 by an earlier attempt; not posted again",
      });

      // GitHub answers 502 after creating it, and the look that follows fails too: the step is
      // retried later, and the retry finds the review before posting.
      const flaky = await pullSession("rv-pub-502", true);
      const { posted } = serveReviews(flaky.r.gh, () => {
        flaky.r.gh.on(LIST, () => ({ status: 502, body: errorBody("Server Error") }));
        return { status: 502, body: errorBody("Server Error") };
      });
      await runDurableObjectAlarm(stubOf(flaky.r, flaky.id));
      await runDurableObjectAlarm(stubOf(flaky.r, flaky.id));
      expect(await runDurableObjectAlarm(stubOf(flaky.r, flaky.id))).toBe(true);
      const failed = (await telemetry(flaky.r, flaky.id)).telemetry.steps[2];
      expect(failed).toMatchObject({ kind: "publish", status: "pending", attempts: [{ outcome: "retry" }] });
      expect(failed.attempts[0].error).toMatch(/^github_unavailable: GitHub answered 502/);
      expect(posted).toHaveLength(1);
      // GitHub is back, holding the review the lost answer was about.
      const created = exampleItem(LIST, { id: 4242, html_url: `https://github.com/${REPO}/pull/7#pullrequestreview-4242`, body: posted[0]!.body!.body, commit_id: REQ_SHA });
      flaky.r.gh.on(LIST, () => ({ body: [created] }));
      const settled = await drive(flaky.r, flaky.id);
      expect(settled.session).toMatchObject({ status: "completed", review_url: `https://github.com/${REPO}/pull/7#pullrequestreview-4242` });
      expect(flaky.r.gh.count(POST)).toBe(1);
      expect((await telemetry(flaky.r, flaky.id)).telemetry.steps[2].attempts.map((a: Structured) => a.outcome)).toEqual(["retry", "ok"]);
    });

    it("finds its earlier review on the last page of a long list, and names the session and commit in the body", async () => {
      const { r, id, posted, reviews } = await pullSession("rv-pub-long", true);
      for (let i = 0; i < 250; i++) reviews.push(exampleItem(LIST, { id: 100 + i, body: `someone else's review ${i}` }));
      const done = await drive(r, id);
      expect(done.session.status).toBe("completed");
      expect(posted).toHaveLength(1);
      expect(posted[0]!.body!.body).toMatch(new RegExp(`^<!-- agent-ledger review: session ${id}, commit ${REQ_SHA} -->\n### Reactive review`));
      expect(reviews.at(-1)).toMatchObject({ id: 4242 + 250 });
      // The same session publishing again (a retried step) answers the review on page 3 of 3.
      const again = await publishReview(sessionGitHub(env as unknown as Env, r.ctx.tenantId), { owner: OWNER, name: NAME, pullNumber: 7, commit: REQ_SHA }, done.result, id);
      expect(again).toEqual({ posted: true, id: 4242 + 250, url: reviews.at(-1)!.html_url, reused: true });
      expect(posted).toHaveLength(1);
      expect(
        r.gh.requests
          .filter((q) => q.op === LIST)
          .slice(-3)
          .map((q) => q.query.page),
      ).toEqual(["1", "2", "3"]);
    });

    it("posts one COMMENT review with the findings, inline where they sit on the diff, and records it", async () => {
      const { r, id, posted } = await pullSession("rv-pub", true);
      const done = await drive(r, id);
      expect(done.session.status).toBe("completed");
      expect(posted).toHaveLength(1);
      const body = posted[0]!.body!;
      expect(posted[0]!.path).toMatchObject({ owner: OWNER, repo: NAME, pull_number: "7" });
      expect(body).toMatchObject({ event: "COMMENT", commit_id: REQ_SHA });
      expect(body.body).toContain(done.result.summary);
      expect(body.body).toContain("**LOW** `OPT001` Optional chaining may hide a missing value (`src/request.ts:104`)");
      expect(body.body).toContain("**INFO** `TST001` Batch reviewed (`src/request.ts:1`)");
      // Inline: the two added `?.` lines; TST001 at line 1 is outside every hunk.
      expect(body.comments).toEqual([104, 112].map((line) => ({ path: "src/request.ts", line, side: "RIGHT", body: expect.stringContaining("**LOW** Optional chaining may hide a missing value") })));
      expect(done.session.review_url).toBe(`https://github.com/${REPO}/pull/7#pullrequestreview-4242`);
      expect(await row(r.ctx.tenantId, id)).toMatchObject({ review_id: 4242, review_url: done.session.review_url, pull_number: 7 });
      expect((await telemetry(r, id)).telemetry.steps[2]).toMatchObject({ kind: "publish", status: "completed", note: "published as review 4242 with 2 inline comment(s)" });
    });

    it("records a refusal (403) as a warning and still completes", async () => {
      const { r, id, posted } = await pullSession("rv-pub403", true);
      r.gh.on("POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews", (req) => {
        posted.push(req);
        return { status: 403, body: errorBody("Resource not accessible by integration") };
      });
      const done = await drive(r, id);
      expect(done.session).toMatchObject({ status: "completed", review_url: null, error: null });
      expect(posted).toHaveLength(1);
      const t = await telemetry(r, id);
      const warning = "The review was not published: GitHub answered 403 (GitHub refused access: Resource not accessible by integration).";
      expect(t.telemetry.steps[2]).toMatchObject({ kind: "publish", status: "skipped", note: warning });
      expect(t.telemetry.warnings).toEqual([warning]);
    });

    it("refuses a commit that is not the pull request's head, before recording anything", async () => {
      const r = await rig("rv-pubhead");
      servePull(r.gh, JSX_SHA, JSX_FILES);
      await refusedWithoutWrites(r.ctx, "reactive_review_pr", { repo: REPO, commit_hash: REQ_SHA, base_ref: "main", changed_files: "src/request.ts", pull_number: 7 }, "commit_not_pr_head", () =>
        sessionsOf(r.ctx.tenantId),
      );
    });
  });

  // ---------------------------------------------------------------------------------------------

  describe("bad input", () => {
    it("refuses bad input without recording a session or asking GitHub", async () => {
      const r = await rig("rv-bad");
      const good = { repo: REPO, commit_hash: JSX_SHA, base_ref: "main", changed_files: "src/request.ts" };
      const state = () => sessionsOf(r.ctx.tenantId);
      const cases: [Record<string, unknown>, string][] = [
        [{ ...good, repo: undefined }, "repo_required"], // none registered to default to
        [{ ...good, commit_hash: "not-a-sha" }, "invalid_input"],
        [{ ...good, changed_files: "" }, "invalid_input"],
        [{ ...good, changed_files: "[broken" }, "invalid_input"],
        [{ ...good, changed_files: "../etc/passwd" }, "invalid_input"],
        [{ ...good, changed_files: "x".repeat(100_001) }, "invalid_input"],
        [{ ...good, max_workers: 0 }, "invalid_input"],
        [{ ...good, additions: -1 }, "invalid_input"],
        [{ ...good, pull_number: 0 }, "invalid_input"],
        [{ ...good, unknown_key: 1 }, "invalid_input"],
        [{ ...good, base_ref: "main..evil" }, "unsafe_ref_token"],
        [{ ...good, repo: "not a repo" }, "invalid_repo"],
      ];
      for (const [args, code] of cases) await refusedWithoutWrites(r.ctx, "reactive_review_pr", args, code, state);
      expect(r.gh.requests).toHaveLength(0);
      await refusedWithoutWrites(r.ctx, "reactive_review_pr", { ...good, commit_hash: "abcdef0123" }, "github_not_found", state);
      for (const tool of ["get_review_status", "pause_review"]) {
        await refusedWithoutWrites(r.ctx, tool, { session_id: "" }, "invalid_input", state);
        await refusedWithoutWrites(r.ctx, tool, { session_id: "x".repeat(129) }, "invalid_input", state);
      }
      // camelCase aliases are accepted, as everywhere.
      const viaAlias = await call(r.ctx, "reactive_review_pr", { repo: REPO, commitHash: REQ_SHA, baseRef: "main", changedFiles: "src/request.ts" });
      expect(viaAlias.ok).toBe(true);
    });
  });

  describe("from webhook to published review, with review_diff's own pipeline", () => {
    it("reviews the pull request's batch as review_diff does, stores that result and publishes it", async () => {
      useBatchReviewer(reviewDiffBatchReviewer);
      const r = await webhookRig("rv-e2e", true);
      await updateReviewSettings(r.ctx, REPO, { publish: true });
      // The repository keeps invariants at the default path; the batch is checked against them at the head commit.
      const policy = [
        "request:",
        "  - id: REQ001",
        "    rule: Route params are read through the matched route",
        "    paths: ['src/request.ts']",
        "    severity: LOW",
        "    category: correctness",
        "    action: deny",
        "    deny:",
        "      regex:",
        "        pattern: '\\?\\.'",
        "",
      ].join("\n");
      r.gh.on("GET /repos/{owner}/{repo}/contents/{path}", (req) => {
        expect(req.path.path).toBe(".review-invariants.yml");
        expect(req.query.ref).toBe(REQ_SHA);
        return { body: example("GET /repos/{owner}/{repo}/contents/{path}", { type: "file", encoding: "base64", path: req.path.path, size: policy.length, content: btoa(policy) }) };
      });
      const posted: FakeRequest[] = [];
      r.gh.on("GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews", () => ({ body: [] }));
      r.gh.on("POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews", (req) => {
        posted.push(req);
        return { body: example("POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews", { id: 77, html_url: `https://github.com/${REPO}/pull/7#pullrequestreview-77`, commit_id: REQ_SHA }) };
      });

      await deliver(r.slug, prPayload("opened"));
      const [s] = await sessionsOf(r.ctx.tenantId);
      const done = await drive(r, s!.id);
      expect(done.session).toMatchObject({ status: "completed", error: null, review_url: `https://github.com/${REPO}/pull/7#pullrequestreview-77` });

      // The same diff through the review_diff tool gives the findings the session stored.
      const direct = await ok(r.ctx, "review_diff", { diff: requestDiff, repo: REPO, head_sha: REQ_SHA });
      const place = (f: Finding) => `${f.id} ${f.location.file}:${f.location.startLine}`;
      expect(direct.findings.map(place)).toContain("REQ001 src/request.ts:104");
      expect(done.result.findings.map(place).sort()).toEqual(direct.findings.map(place).sort());
      expect(done.result).toMatchObject({ reviewed_commit: REQ_SHA, risk_score: direct.risk_score, classification: direct.classification, files_reviewed: 2 });
      expect(
        JSON.parse((await row(r.ctx.tenantId, s!.id))!.result)
          .findings.map(place)
          .sort(),
      ).toEqual(direct.findings.map(place).sort());

      expect(posted).toHaveLength(1);
      expect(posted[0]!.body).toMatchObject({ event: "COMMENT", commit_id: REQ_SHA });
      expect(posted[0]!.body!.body).toContain("`REQ001` Route params are read through the matched route");
    });
  });
});

describe("get_review_status", () => {
  it("answers session_not_found for an unknown id and for another tenant's session, and changes nothing", async () => {
    const r = await rig("rv-iso");
    const id = (await startJsx(r)).session_id as string;
    const other = await rig("rv-iso-other");
    for (const tool of ["get_review_status", "get_review_telemetry", "pause_review", "resume_review"]) {
      for (const sid of [id, "01900000-0000-7000-8000-000000000000"]) {
        const e = await refusedWithoutWrites(other.ctx, tool, { session_id: sid }, "session_not_found", () => status(r, id));
        expect(e.message).toBe(`Session not found: ${sid}`);
      }
    }
    expect((await status(r, id)).session.status).toBe("executing");
  });
});

describe("get_review_telemetry", () => {
  it("has every step's kind, files, findings, attempts and durations, and the server's settings", async () => {
    const r = await rig("rv-tele");
    const id = (await startJsx(r)).session_id as string;
    await drive(r, id);
    const t = await telemetry(r, id);
    expect(t).toMatchObject({ session_id: id, session_status: "completed", session_error: null });
    expect(t.reactive_config).toEqual({ batch_size: 5, workers: 1, max_step_attempts: 3, step_gap_ms: HOUR });
    expect(t.telemetry.steps.map((s: Structured) => [s.step_number, s.kind, s.status, s.files])).toEqual([
      [1, "review_batch", "completed", 5],
      [2, "review_batch", "completed", 3],
      [3, "merge", "completed", 0],
    ]);
    const [b1, b2, merge] = t.telemetry.steps;
    expect(b1.findings + b2.findings).toBe(merge.findings);
    for (const s of t.telemetry.steps) {
      expect(s.attempts).toHaveLength(1);
      expect(s.attempts[0].outcome).toBe("ok");
      expect(Date.parse(s.attempts[0].started_at)).not.toBeNaN();
      expect(s.duration_ms).toBe(s.attempts[0].duration_ms);
    }
    expect(merge.note).toMatch(/^Reviewed 8 file\(s\)/);
    expect(t.telemetry).toMatchObject({ retries: 0, warnings: [], appears_stalled: false });
    expect(t.telemetry.elapsed_ms).toBeGreaterThanOrEqual(0);
  });
});

describe("pause_review", () => {
  it("keeps a pause that arrives while a step runs: the step's outcome is recorded, no next step starts", async () => {
    const r = await rig("rv-midpause");
    const id = (await startJsx(r)).session_id as string;
    let pausedMidStep: Structured | null = null;
    useBatchReviewer(async (ctx, input) => {
      pausedMidStep ??= await ok(r.ctx, "pause_review", { session_id: id });
      return testReviewer(ctx, input);
    });
    expect(await runDurableObjectAlarm(stubOf(r, id))).toBe(true);
    expect(pausedMidStep!.status).toBe("paused");
    const s = await status(r, id);
    expect(s.session.status).toBe("paused");
    expect(s.progress.completed_steps).toBe(1);
    expect(await alarmAt(r, id)).toBeNull();
  });
});

describe("resume_review", () => {
  it("pauses (the alarm is cleared), resumes (set again), and says so when there is nothing to change", async () => {
    const r = await rig("rv-pause");
    const id = (await startJsx(r)).session_id as string;
    expect(await runDurableObjectAlarm(stubOf(r, id))).toBe(true);

    const paused = await ok(r.ctx, "pause_review", { session_id: id });
    expect(paused).toMatchObject({ status: "paused", message: `Review session ${id} paused`, progress: { completed_steps: 1, total_steps: 3 } });
    expect(await alarmAt(r, id)).toBeNull();
    expect(await runDurableObjectAlarm(stubOf(r, id))).toBe(false);
    expect(calls).toHaveLength(1);
    expect((await status(r, id)).session.status).toBe("paused");
    expect((await row(r.ctx.tenantId, id))!.status).toBe("paused");
    expect(await ok(r.ctx, "pause_review", { session_id: id })).toMatchObject({ status: "paused", message: `Review session ${id} is already paused` });

    const resumed = await ok(r.ctx, "resume_review", { session_id: id });
    expect(resumed).toMatchObject({ status: "executing", progress: { completed_steps: 1 } });
    expect(resumed.message).toBe(`Review session ${id} resumed. Execution running in background. Use get_review_status to monitor progress.`);
    expect(await alarmAt(r, id)).not.toBeNull();
    expect(await ok(r.ctx, "resume_review", { session_id: id })).toMatchObject({ status: "executing", message: `Review session ${id} is already executing` });

    expect((await drive(r, id)).session.status).toBe("completed");
    expect(calls).toHaveLength(2);
    await refusedWithoutWrites(r.ctx, "pause_review", { session_id: id }, "session_not_executing", () => status(r, id));
    const e = await fails(r.ctx, "resume_review", { session_id: id });
    expect(e).toMatchObject({ code: "session_not_paused", message: "Session is not paused (current status: completed)" });
    expect((await fails(r.ctx, "pause_review", { session_id: id })).message).toBe("Session is not executing (current status: completed)");
  });
});

describe("list_review_sessions", () => {
  const list = (r: Rig, args: Record<string, unknown> = {}) => ok(r.ctx, "list_review_sessions", args);
  const ids = async (r: Rig, args: Record<string, unknown> = {}) => (await list(r, args)).items.map((s: Structured) => s.session_id);
  const startOn = (r: Rig, repo: string) => ok(r.ctx, "reactive_review_pr", { repo, commit_hash: JSX_SHA, base_ref: JSX_PARENT, changed_files: "src/jsx/base.ts" });
  const startPull = (r: Rig) => ok(r.ctx, "reactive_review_pr", { repo: REPO, commit_hash: REQ_SHA, base_ref: "main", changed_files: "src/request.ts", pull_number: 7 });

  it("lists the tenant's sessions newest first, as get_review_status names them, by repo, pull request and status", async () => {
    const r = await rig("rv-list");
    servePull(r.gh, REQ_SHA, REQ_FILES);
    const done = (await startJsx(r)).session_id as string;
    await drive(r, done);
    r.clock.advance(MINUTE);
    const paused = (await startOn(r, "Other/Thing")).session_id as string;
    await ok(r.ctx, "pause_review", { session_id: paused });
    r.clock.advance(MINUTE);
    const replaced = (await startPull(r)).session_id as string;
    r.clock.advance(MINUTE);
    const running = await startPull(r);
    expect(running.replaced_sessions).toEqual([replaced]);

    const all = await list(r);
    expect(all.items.map((s: Structured) => s.session_id)).toEqual([running.session_id, replaced, paused, done]);
    expect(all.items.map((s: Structured) => s.status)).toEqual(["executing", "cancelled", "paused", "completed"]);
    expect(all.next_cursor).toBeUndefined();
    // Each item says what get_review_status says of the session, under the same names.
    for (const item of all.items) {
      const s = await status(r, item.session_id);
      const { session_id, pull_number, commit_hash, base_ref, source, created_at, updated_at, error, review_url } = s.session;
      expect(item).toMatchObject({ session_id, pull_number, commit_hash, base_ref, source, created_at, updated_at, error, review_url });
      expect(item).toMatchObject({ repo: s.session.repo.toLowerCase(), progress: s.progress, findings_count: s.findings_count, created_by: r.ctx.actorId });
      expect(item.finished_at === null).toBe(["executing", "paused"].includes(item.status));
    }
    expect(all.items[3]).toMatchObject({ repo: "honojs/hono", pull_number: null, progress: { completed_steps: 3, total_steps: 3, percentage: 100 } });
    expect(all.items[3].findings_count).toBeGreaterThan(0);
    expect(all.items[1]).toMatchObject({ pull_number: 7, error: `Superseded by session ${running.session_id} (head ${REQ_SHA.slice(0, 12)})` });

    // Repositories match as review_settings keys them: owner/name in any case.
    expect(await ids(r, { repo: "HonoJS/HONO" })).toEqual([running.session_id, replaced, done]);
    expect(await ids(r, { repo: "other/thing" })).toEqual([paused]);
    expect(await ids(r, { repo: "someone/else" })).toEqual([]);
    expect(await ids(r, { repo: REPO, pull_number: 7 })).toEqual([running.session_id, replaced]);
    expect(await ids(r, { repo: REPO, pull_number: 8 })).toEqual([]);
    expect(await ids(r, { status: ["completed", "cancelled"] })).toEqual([replaced, done]);
    expect(await ids(r, { status: ["paused"], repo: REPO })).toEqual([]);
    expect(await ids(r, { status: ["executing"], repo: REPO, pull_number: 7 })).toEqual([running.session_id]);
  });

  it("pages with the cursor: each session once, in order, ties on created_at broken by id, a newer session not shifting the pages", async () => {
    const r = await rig("rv-list-page");
    const started: string[] = [];
    // Three sessions share one millisecond: only the id orders them.
    for (const step of [0, MINUTE, 0, 0, MINUTE, MINUTE]) {
      r.clock.advance(step);
      started.push((await startOn(r, REPO)).session_id);
    }
    const [t0, t1a, t1b, t1c, t2, t3] = started as [string, string, string, string, string, string];
    const whole = await ids(r, { limit: 100 });
    expect(whole).toEqual([t3, t2, ...[t1a, t1b, t1c].sort().reverse(), t0]);

    const first = await list(r, { limit: 4 });
    expect(first.items.map((s: Structured) => s.session_id)).toEqual(whole.slice(0, 4));
    expect(typeof first.next_cursor).toBe("string");
    // A session started after the first page is not on the later ones, and moves nothing.
    r.clock.advance(MINUTE);
    const newer = (await startOn(r, REPO)).session_id as string;
    const pages = [first.items.map((s: Structured) => s.session_id)];
    let cursor = first.next_cursor as string | undefined;
    while (cursor !== undefined) {
      const page = await list(r, { limit: 1, cursor });
      pages.push(page.items.map((s: Structured) => s.session_id));
      cursor = page.next_cursor;
    }
    // The first page ends inside the three that share a millisecond.
    expect(pages.map((p) => p.length)).toEqual([4, 1, 1]);
    expect(pages.flat()).toEqual(whole);
    expect((await ids(r, { limit: 1 }))[0]).toBe(newer);

    // The cursor pages a filtered listing too.
    const a = await list(r, { repo: REPO, status: ["executing"], limit: 4 });
    const b = await list(r, { repo: REPO, status: ["executing"], limit: 4, cursor: a.next_cursor });
    expect([...a.items, ...b.items].map((s: Structured) => s.session_id)).toEqual([newer, ...whole]);
    expect(b.next_cursor).toBeUndefined();
  });

  it("refuses bad input with a hint, recording nothing", async () => {
    const r = await rig("rv-list-bad");
    await startJsx(r);
    const state = () => sessionsOf(r.ctx.tenantId);
    const cases: [Record<string, unknown>, string][] = [
      [{ pull_number: 7 }, "invalid_input"],
      [{ pull_number: 0, repo: REPO }, "invalid_input"],
      [{ status: ["running"] }, "invalid_input"],
      [{ status: [] }, "invalid_input"],
      [{ status: "completed" }, "invalid_input"],
      [{ limit: 0 }, "invalid_input"],
      [{ limit: 101 }, "invalid_input"],
      [{ cursor: "not-a-cursor" }, "invalid_input"],
      [{ cursor: btoa(JSON.stringify({ k: ["2026-01-01T00:00:00.000Z"] })) }, "invalid_input"],
      [{ cursor: "x".repeat(501) }, "invalid_input"],
      [{ repo: "not a repo" }, "invalid_repo"],
      [{ session_id: "x" }, "invalid_input"],
    ];
    for (const [args, code] of cases) await refusedWithoutWrites(r.ctx, "list_review_sessions", args, code, state);
    const e = await fails(r.ctx, "list_review_sessions", { pull_number: 7 });
    expect(e.hint).toMatch(/Name the repository too/);
    expect(r.gh.count("GET /repos/{owner}/{repo}/commits/{ref}")).toBe(1);
  });

  it("never lists another tenant's sessions, whatever the filter or cursor", async () => {
    const a = await rig("rv-list-a");
    const b = await rig("rv-list-b");
    const mine = [(await startJsx(a)).session_id, (await startOn(a, REPO)).session_id];
    // B's session is older than all of A's, so A's cursor, were it to carry A's tenant, would page past it.
    b.clock.set("2020-01-01T00:00:00.000Z");
    const theirs = (await startJsx(b)).session_id as string;
    expect(new Set(await ids(a))).toEqual(new Set(mine));
    expect(await ids(b)).toEqual([theirs]);
    expect(await ids(b, { repo: REPO, status: ["executing"] })).toEqual([theirs]);
    // A's cursor in B's hands pages B's sessions only.
    const page = await list(a, { limit: 1 });
    expect(page.next_cursor).toBeDefined();
    expect(await ids(b, { cursor: page.next_cursor })).toEqual([theirs]);
  });

  it("pages from an index in created_at, id order, all sessions or one repository's, without sorting them", async () => {
    const plan = async (filter: Parameters<typeof sessionListQuery>[2]) => {
      const q = sessionListQuery(env.DB, "tenant", filter, 21).toSQL();
      const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
        .bind(...q.params)
        .all<{ detail: string }>();
      return rows.results.map((x) => x.detail).join(" | ");
    };
    for (const [filter, index] of [
      [{ statuses: ["executing", "paused"] }, "review_sessions_created_idx"],
      [{ repo: "honojs/hono" }, "review_sessions_repo_created_idx"],
      [{ repo: "honojs/hono", pullNumber: 7 }, "review_sessions_repo_created_idx"],
    ] as const) {
      const details = await plan(filter);
      expect(details).toContain(`USING INDEX ${index}`);
      expect(details).not.toContain("TEMP B-TREE");
    }
  });
});
