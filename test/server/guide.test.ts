/** The guide (the `guide` tool and ledger://guide) teaches one task end to end, in the order it happens, with real tool names. */
import { describe, expect, it } from "vitest";
import { findTopic, GUIDE_TOPICS, renderTopic } from "../../src/guide/topics";
import { ALL_TOOLS, TOOLSETS } from "../../src/server/registry";
import { ALL_TOOL_NAMES } from "../support/tool-names";

describe("guide", () => {
  it("walks a task from the claim through the log and the handoff to the reviewer's verdict and done", () => {
    const walk = findTopic("walkthrough");
    expect(walk, "a walkthrough topic").toBeDefined();
    const text = walk!.body;
    const order = ["whoami", "task_claim", "prior_attempts", "log_change", "task_code_ref", "in_review", "handoff_create", "handoff_claim", "handoff_respond", "verdict", '"done"', "inbox { ack"];
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
      expect(
        calls.filter((c) => !known.has(c)),
        topic.id,
      ).toEqual([]);
    }
  });

  it("keeps each topic readable: short lines, a page at most", () => {
    for (const topic of GUIDE_TOPICS) {
      expect(renderTopic(topic).length, topic.id).toBeLessThan(4_000);
      for (const line of topic.body.split("\n")) expect(line.length, `${topic.id}: ${line.slice(0, 60)}`).toBeLessThan(320);
    }
  });
});

// Its calls run as written, as an agent follows them, against wrangler dev: test/e2e/doc-examples.e2e.test.ts.
describe("walkthrough, as an agent reads it", () => {
  const walk = findTopic("walkthrough")!.body;

  // An agent connects to /mcp as the guide says; a tool off the default surface is unreachable unless the walkthrough says how.
  it("names the toolset of every tool it uses that the default surface does not list", () => {
    const offDefault = ALL_TOOLS.filter((d) => !TOOLSETS.find((t) => t.id === d.toolset)?.default && new RegExp(`\\b${d.name} \\{`).test(walk));
    expect(offDefault.map((d) => d.name)).toContain("task_code_ref");
    for (const d of offDefault) expect(walk, `${d.name} is in toolset ${d.toolset}`).toMatch(new RegExp(`toolsets=[a-z,]*\\b${d.toolset}\\b`));
  });
});
