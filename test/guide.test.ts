/** The guide (the `guide` tool and ledger://guide) teaches one task end to end, in the order it happens, with real tool names. */
import { describe, expect, it } from "vitest";
import { findTopic, GUIDE_TOPICS, renderTopic } from "../src/guide/topics";
import { fails, newWorld, ok, type Structured } from "./helpers";
import { ALL_TOOLS, TOOLSETS } from "../src/mcp/registry";
import { ALL_TOOL_NAMES } from "./tool-names";

describe("guide", () => {
  it("walks a task from the claim through the log and the handoff to the reviewer's verdict and done", () => {
    const walk = findTopic("walkthrough");
    expect(walk, "a walkthrough topic").toBeDefined();
    const text = walk!.body;
    const order = ["whoami", "task_claim", "prior_attempts", "log_change", "task_code_ref", "in_review", "handoff_create", "handoff_claim", "handoff_respond", "verdict", "\"done\"", "inbox { ack"];
    const at = order.map((word) => text.indexOf(word));
    expect(at.filter((i) => i < 0).length, `missing: ${order.filter((_, i) => at[i]! < 0).join(", ")}`).toBe(0);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    // the-loop, the short version, points to it.
    expect(findTopic("the-loop")!.body).toContain("walkthrough");
  });

  it("names only tools that exist, with arguments the tools take", () => {
    const known = new Set<string>(ALL_TOOL_NAMES);
    for (const topic of GUIDE_TOPICS) {
      // A call written as `name { … }` (a snake_case name, or a one-word tool) must be a real tool.
      const calls = [...topic.body.matchAll(/\b([a-z]+(?:_[a-z]+)+|whoami|inbox) \{/g)].map((m) => m[1]!);
      expect(calls.filter((c) => !known.has(c)), topic.id).toEqual([]);
    }
  });

  it("keeps each topic readable: short lines, a page at most", () => {
    for (const topic of GUIDE_TOPICS) {
      expect(renderTopic(topic).length, topic.id).toBeLessThan(4_000);
      for (const line of topic.body.split("\n")) expect(line.length, `${topic.id}: ${line.slice(0, 60)}`).toBeLessThan(320);
    }
  });
});

describe("walkthrough, as an agent follows it", () => {
  /** Each call is quoted from the walkthrough: a step that drifts from the tools fails here. */
  const walk = findTopic("walkthrough")!.body;
  const said = (text: string) => expect(walk, "the walkthrough says").toContain(text);

  // An agent connects to /mcp as the guide says; a tool off the default surface is unreachable unless the walkthrough says how.
  it("names the toolset of every tool it uses that the default surface does not list", () => {
    const offDefault = ALL_TOOLS.filter((d) => !TOOLSETS.find((t) => t.id === d.toolset)?.default && new RegExp(`\\b${d.name} \\{`).test(walk));
    expect(offDefault.map((d) => d.name)).toContain("task_code_ref");
    for (const d of offDefault) expect(walk, `${d.name} is in toolset ${d.toolset}`).toMatch(new RegExp(`toolsets=[a-z,]*\\b${d.toolset}\\b`));
  });

  it("claims, logs, asks for review once, gets approved and finishes with the fencing token from the claim", async () => {
    const w = await newWorld("guide-walk", { start: "2030-01-01T00:00:00.000Z", actor: "agent" });
    const alice = await w.other("alice");
    await ok(w.ctx, "project_create", { title: "Web", key: "WEB" });
    await ok(w.ctx, "task_create_many", { project_id: "WEB", tasks: Array.from({ length: 12 }, (_, i) => ({ title: `task ${i + 1}` })) });
    await ok(w.ctx, "task_update", { task_id: "WEB-12", patch: { requires_evidence: true } });

    // 1. Orient.
    await ok(w.ctx, "whoami", {});
    said(`project_brief { project: "WEB" }`);
    await ok(w.ctx, "project_brief", { project: "WEB" });
    said(`task_query { project_id: "WEB", state: "ready" }`);
    expect((await ok(w.ctx, "task_query", { project_id: "WEB", state: "ready" })).items.map((t: Structured) => t.ref)).toContain("WEB-12");
    // 2. Claim.
    said(`task_claim { task_id: "WEB-12" }`);
    const claim = await ok(w.ctx, "task_claim", { task_id: "WEB-12" });
    expect(claim).toMatchObject({ claimed: true, task: { status: "in_progress" } });
    const fencing_token = claim.fencing_token as number;
    // 3. Before editing.
    said(`prior_attempts { entity_path: "src/auth.ts::login" }`);
    await ok(w.ctx, "prior_attempts", { entity_path: "src/auth.ts::login" });
    // 4. Log each change.
    said(`log_change { entity_path: "src/auth.ts::login", change_type: "modify", reasoning: "lock the account after 5 failures", git_commit: "<sha>" }`);
    await ok(w.ctx, "log_change", { entity_path: "src/auth.ts::login", change_type: "modify", reasoning: "lock the account after 5 failures", git_commit: "0123456789abcdef0123456789abcdef01234567" });
    // 5. Record the delivery.
    said(`task_code_ref { task_id: "WEB-12", ref_type: "pr", pr_url: "https://github.com/acme/web/pull/7" }`);
    await ok(w.ctx, "task_code_ref", { task_id: "WEB-12", ref_type: "pr", pr_url: "https://github.com/acme/web/pull/7" });
    // 6. Ask for review: the move opens the review and says so, and the lease it ended.
    said(`actor_query { q: "alice" }`);
    const found = await ok(w.ctx, "actor_query", { q: "alice" });
    const reviewer = (found.items as Structured[])[0]!.id as string;
    expect(reviewer).toBe(alice.id.actorId);
    said(`task_update { task_id: "WEB-12", patch: { status: "in_review", reviewer_actor_id: "<reviewer>" }, fencing_token }`);
    const moved = await ok(w.ctx, "task_update", { task_id: "WEB-12", patch: { status: "in_review", reviewer_actor_id: reviewer }, fencing_token });
    expect(moved).toMatchObject({ task: { status: "in_review" }, lease: "released", review_handoff: { to: [reviewer], opened: true } });
    said(`lease: "released"`);
    // A second review request is refused, naming the open one.
    said(`handoff_create { kind: "review" }`);
    const second = await fails(w.ctx, "handoff_create", { kind: "review", to_actor_ids: [reviewer], title: "Review WEB-12", related_task_id: "WEB-12" });
    expect(second.code).toBe("review_already_open");
    expect(second.hint).toContain(moved.review_handoff.id);
    // 7. The reviewer's side.
    const inbox = await ok(alice.ctx, "inbox", {});
    expect((inbox.items as Structured[]).map((h) => h.id)).toEqual([moved.review_handoff.id]);
    const handoff_id = moved.review_handoff.id as string;
    said(`handoff_claim { handoff_id }`);
    await ok(alice.ctx, "handoff_claim", { handoff_id });
    said(`handoff_respond { handoff_id, response: { verdict: "approved" } }`);
    await ok(alice.ctx, "handoff_respond", { handoff_id, response: { verdict: "approved" } });
    // 8. Finish, with the token from step 2.
    said(`task_update { task_id: "WEB-12", patch: { status: "done" }, fencing_token }`);
    const done = await ok(w.ctx, "task_update", { task_id: "WEB-12", patch: { status: "done" }, fencing_token });
    expect(done.task.status).toBe("done");
    said(`inbox { ack: [ids] }`);
    await ok(alice.ctx, "inbox", { ack: [handoff_id] });
    expect((await ok(alice.ctx, "inbox", {})).total).toBe(0);
  });
});
