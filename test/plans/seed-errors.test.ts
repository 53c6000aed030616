/**
 * Seed 004's error form: a failed call of a code, review or plans tool reads, as text,
 * {"error":{"code":"PLAN_NOT_FOUND","message":…,"details":{…}}}, while structuredContent keeps
 * the envelope every tool answers with (its code, hint and retryable are in details too).
 */
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { newWorld } from "../support/helpers";

async function failure(ctx: Ctx, name: string, args: unknown) {
  const r = await callTool(findTool(name)!, ctx, args);
  expect(r.isError, name).toBe(true);
  const text = JSON.parse((r.content[0] as { text: string }).text) as { error: { code: string; message: string; details: { ledger_code: string; hint: string; retryable: boolean } } };
  const envelope = r.structuredContent as { ok: boolean; error: { code: string; message: string; hint: string; retryable: boolean } };
  expect(envelope.ok).toBe(false);
  // Both readings carry the same failure.
  expect(text.error.message).toBe(envelope.error.message);
  expect(text.error.details).toEqual({ ledger_code: envelope.error.code, hint: envelope.error.hint, retryable: envelope.error.retryable });
  expect(text.error.details.hint.length).toBeGreaterThan(0);
  return { seed: text.error, envelope: envelope.error };
}

describe("seed 004's error form", () => {
  it("names the seed's codes: PLAN_NOT_FOUND, INVALID_INPUT, SESSION_NOT_FOUND; others are ours in upper case", async () => {
    const w = await newWorld("seed4-errors", { start: "2026-06-01T12:00:00.000Z" });
    const missing = await failure(w.ctx, "load_plan", { plan_id: "nope" });
    expect(missing.seed).toMatchObject({ code: "PLAN_NOT_FOUND", message: "Plan nope not found" });
    expect(missing.envelope.code).toBe("not_found");
    expect((await failure(w.ctx, "view_progress", { plan_id: "nope" })).seed.code).toBe("PLAN_NOT_FOUND");
    const bad = await failure(w.ctx, "save_plan", { plan: "{not json" });
    expect(bad.seed.code).toBe("INVALID_INPUT");
    expect(bad.envelope.code).toBe("invalid_input");
    expect((await failure(w.ctx, "save_plan", { plan: {}, bogus: 1 })).seed.code).toBe("INVALID_INPUT");
    expect((await failure(w.ctx, "get_review_status", { session_id: "nope" })).seed.code).toBe("SESSION_NOT_FOUND");
    expect((await failure(w.ctx, "check_invariants", { diff: "diff --git a/x b/x\n" })).seed.code).toBe("REPO_REQUIRED");
  });

  it("is only for seed 004's tools: the work ledger keeps its text", async () => {
    const w = await newWorld("seed4-errors-other", { start: "2026-06-01T12:00:00.000Z" });
    const r = await callTool(findTool("task_get")!, w.ctx, { task_id: "nope" });
    expect((r.content[0] as { text: string }).text).toMatch(/^Error \[not_found\]/);
  });
});
