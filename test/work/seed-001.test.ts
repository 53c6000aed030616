/**
 * Seed 001 (the work ledger) names 57 tools in its tool reference, room by room. This is that list,
 * copied from the seed: a tool the seed names but the registry lacks fails here, as does a change
 * to the count.
 */
import { describe, expect, it } from "vitest";
import { ALL_TOOLS } from "../../src/server/registry";
import { connectClient, seedIdentity } from "../support/helpers";

const SEED_001_TOOLS: Record<string, readonly string[]> = {
  "Identity & directory": ["whoami", "register_actor", "actor_query"],
  Projects: ["project_create", "project_update", "project_query", "project_brief"],
  Tasks: ["task_create", "task_create_many", "task_update", "task_assign", "task_query", "task_get", "task_link", "task_claim", "task_release"],
  Decisions: ["decision_log", "decision_set_status", "decision_query"],
  "Handoffs & inbox": ["handoff_create", "handoff_claim", "handoff_respond", "handoff_resolve", "handoff_query", "inbox"],
  Knowledge: ["knowledge_write", "knowledge_update", "knowledge_search"],
  "Comments & activity": ["comment_add", "comment_query", "activity_log", "activity_query"],
  "Attachments & notifications": ["attach_add", "attach_remove", "attachment_query", "notification_query", "notification_mark_read"],
  "Search & skills": ["search", "skill_list", "skill_get", "skill_upsert", "guide"],
  Runs: ["run_fork", "run_heartbeat", "run_end", "run_query", "run_get", "run_summary"],
  "Repositories & code": ["repo_register", "repo_link", "repo_query", "task_code_ref", "code_ref_add", "code_ref_update", "code_ref_query"],
  Feedback: ["feature_request_create", "feature_request_query"],
};
const SEED_TOOLS = Object.values(SEED_001_TOOLS).flat();

describe("seed 001's tool surface", () => {
  it("names 57 distinct tools", () => {
    expect(SEED_TOOLS).toHaveLength(57);
    expect(new Set(SEED_TOOLS).size).toBe(57);
  });

  it("has every one of them in the registry", () => {
    const registered = new Set(ALL_TOOLS.map((t) => t.name));
    expect(SEED_TOOLS.filter((name) => !registered.has(name))).toEqual([]);
  });

  it("lists every one of them over /mcp with toolsets=all, and initialize orients the agent", async () => {
    const id = await seedIdentity("seed-001-surface", "agent");
    const { client, transport } = await connectClient(id.key, "/mcp?toolsets=all");
    const listed = new Set((await client.listTools()).tools.map((t) => t.name));
    expect(SEED_TOOLS.filter((name) => !listed.has(name))).toEqual([]);
    // The orientation every agent gets on initialize: whoami first, then how the rooms fit.
    const instructions = client.getInstructions() ?? "";
    expect(instructions).toMatch(/Call whoami first/);
    for (const tool of ["project_brief", "task_claim", "knowledge_search", "search", "log_change", "prior_attempts", "guide", "feature_request_create"]) {
      expect(instructions).toContain(tool);
    }
    await transport.terminateSession();
    await client.close();
  });
});
