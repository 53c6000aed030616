/**
 * `agent-ledger hooks install|uninstall` planners: for each client, the documented file and shape;
 * the user's own hooks and keys kept; a second install changes nothing; an uninstall takes away
 * exactly what the install wrote; the diff --dry-run shows.
 */
import { describe, expect, it } from "vitest";
import { HOOK_CLIENTS, HookSettingsError, planInstall, planUninstall, renderDiff, type HookClient, type HookPlan, type PlanOptions } from "../../src/cli/hooks";

const base: PlanOptions = { url: "https://ledger.example.com/", repository: "acme/api", mode: "http", scope: "project", cwd: "/home/dev/api", home: "/home/dev" };

/** Each client's own hooks as its documentation shows them, plus keys the planner must not touch. */
const USER_FILES: Record<HookClient, string> = {
  "claude-code": JSON.stringify(
    {
      permissions: { allow: ["Bash(npm test)"] },
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./check.sh" }] }],
        Stop: [{ hooks: [{ type: "command", command: "say done" }] }],
      },
    },
    null,
    4,
  ),
  codex: JSON.stringify({ description: "team hooks", hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "python3 policy.py", statusMessage: "Checking" }] }] } }),
  gemini: JSON.stringify({ general: { vimMode: true }, hooks: { BeforeTool: [{ matcher: "run_shell_command", hooks: [{ name: "guard", type: "command", command: "./guard.sh", timeout: 5000 }] }] } }),
  cursor: JSON.stringify({ version: 1, hooks: { afterFileEdit: [{ command: ".cursor/hooks/format.sh" }], beforeShellExecution: [{ command: "./audit.sh", matcher: "curl" }] } }),
};

describe("planInstall", () => {
  it("writes Claude Code's http hooks to .claude/settings.json: the server's URL with the repository, the key from the environment, the edit matcher", () => {
    const plan: HookPlan = planInstall("claude-code", base, null);
    expect(plan.path).toBe("/home/dev/api/.claude/settings.json");
    expect(plan.before).toBeNull();
    const doc = JSON.parse(plan.after!);
    expect(Object.keys(doc.hooks)).toEqual(["PreToolUse", "PostToolUse", "SessionStart", "PostCompact", "PreCompact", "Stop"]);
    expect(doc.hooks.PreToolUse).toEqual([
      {
        matcher: "Edit|Write|MultiEdit|NotebookEdit",
        hooks: [
          {
            type: "http",
            url: "https://ledger.example.com/mcp/hooks/claude-code?repository=acme/api",
            headers: { Authorization: "Bearer $AGENT_LEDGER_KEY" },
            allowedEnvVars: ["AGENT_LEDGER_KEY"],
            timeout: 10,
          },
        ],
      },
    ]);
    expect(doc.hooks.SessionStart[0].matcher).toBeUndefined();
    expect(plan.after!.startsWith('{\n  "hooks": {\n')).toBe(true);
  });

  it("writes command hooks running the relay for Claude Code with mode command, and for the clients that run only commands", () => {
    const claude = JSON.parse(planInstall("claude-code", { ...base, mode: "command" }, null).after!);
    expect(claude.hooks.Stop[0].hooks[0]).toEqual({ type: "command", command: "npx agent-ledger hook claude-code --repository acme/api", timeout: 30 });
    const codex = planInstall("codex", base, null);
    expect(codex.path).toBe("/home/dev/api/.codex/hooks.json");
    const c = JSON.parse(codex.after!);
    expect(Object.keys(c.hooks)).toEqual(["SessionStart", "PreToolUse", "PostToolUse", "PreCompact", "Stop"]);
    expect(c.hooks.PreToolUse[0]).toEqual({ matcher: "apply_patch", hooks: [{ type: "command", command: "npx agent-ledger hook codex --repository acme/api", timeout: 30 }] });
    const gemini = planInstall("gemini", { ...base, repository: undefined }, null);
    expect(gemini.path).toBe("/home/dev/api/.gemini/settings.json");
    const g = JSON.parse(gemini.after!);
    expect(g.hooks.BeforeTool[0]).toEqual({ matcher: "write_file|replace", hooks: [{ name: "agent-ledger", type: "command", command: "npx agent-ledger hook gemini", timeout: 30000 }] });
    expect(Object.keys(g.hooks)).toEqual(["SessionStart", "BeforeTool", "AfterTool", "AfterAgent", "PreCompress"]);
    const cursor = planInstall("cursor", { ...base, scope: "user" }, null);
    expect(cursor.path).toBe("/home/dev/.cursor/hooks.json");
    expect(JSON.parse(cursor.after!)).toEqual({
      version: 1,
      hooks: Object.fromEntries(["sessionStart", "afterFileEdit", "preCompact", "stop"].map((e) => [e, [{ command: "npx agent-ledger hook cursor --repository acme/api", timeout: 30 }]])),
    });
  });

  for (const client of HOOK_CLIENTS) {
    it(`${client}: keeps the user's own hooks and keys, changes nothing on a second install, and uninstall gives back the user's file`, () => {
      const user = USER_FILES[client];
      const first = planInstall(client, base, user);
      const installed = JSON.parse(first.after!);
      const original = JSON.parse(user);
      // Every key and hook of the user's is still there, first in its list.
      for (const key of Object.keys(original)) if (key !== "hooks") expect(installed[key]).toEqual(original[key]);
      for (const [event, list] of Object.entries(original.hooks as Record<string, unknown[]>)) expect(installed.hooks[event].slice(0, list.length)).toEqual(list);
      const second = planInstall(client, base, first.after);
      expect(second.after).toBe(first.after);
      const undone = planUninstall(client, base, first.after);
      expect(JSON.parse(undone.after!)).toEqual(original);
      // Nothing of ours left: a second uninstall changes nothing.
      expect(planUninstall(client, base, undone.after).after).toBe(undone.after);
    });
  }

  it("replaces its own hooks when the address changes, and leaves a user's hook after ours where it was", () => {
    const first = planInstall("codex", base, null).after!;
    const doc = JSON.parse(first);
    doc.hooks.Stop.push({ hooks: [{ type: "command", command: "notify-send done" }] });
    const edited = JSON.stringify(doc, null, 2);
    expect(planInstall("codex", base, edited).after).toBe(edited);
    const moved = JSON.parse(planInstall("codex", { ...base, repository: "acme/web" }, edited).after!);
    expect(moved.hooks.Stop).toEqual([
      { hooks: [{ type: "command", command: "notify-send done" }] },
      { hooks: [{ type: "command", command: "npx agent-ledger hook codex --repository acme/web", timeout: 30 }] },
    ]);
  });

  it("refuses a file it cannot edit safely and a repository that is not a slug", () => {
    expect(() => planInstall("gemini", base, "{ // comments\n}")).toThrow(HookSettingsError);
    expect(() => planInstall("gemini", base, "[]")).toThrow(/does not hold a JSON object/);
    expect(() => planInstall("claude-code", base, '{"hooks": []}')).toThrow(/"hooks" that is not an object/);
    expect(() => planInstall("codex", { ...base, repository: "acme/api; rm -rf ~" }, null)).toThrow(/not a repository slug/);
    expect(() => planInstall("windsurf" as HookClient, base, null)).toThrow(/No hooks for client "windsurf"/);
  });
});

describe("planUninstall", () => {
  it("deletes a file that held nothing but our hooks, and does nothing where there is no file", () => {
    for (const client of HOOK_CLIENTS) {
      const installed = planInstall(client, base, null).after!;
      expect(planUninstall(client, base, installed), client).toMatchObject({ before: installed, after: null });
    }
    expect(planUninstall("cursor", base, null)).toEqual({ path: "/home/dev/api/.cursor/hooks.json", before: null, after: null });
  });

  it("removes exactly our handlers from a group it shares with the user's", () => {
    const shared = {
      hooks: {
        Stop: [
          {
            hooks: [
              { type: "command", command: "say done" },
              { type: "http", url: "https://l.example/mcp/hooks/claude-code" },
            ],
          },
        ],
      },
      model: "opus",
    };
    const after = planUninstall("claude-code", base, JSON.stringify(shared)).after!;
    expect(JSON.parse(after)).toEqual({ hooks: { Stop: [{ hooks: [{ type: "command", command: "say done" }] }] }, model: "opus" });
  });
});

describe("renderDiff", () => {
  it("shows the dry run as a unified diff: a new file, a change with context, nothing when equal", () => {
    const plan = planInstall("cursor", base, null);
    const created = renderDiff(".cursor/hooks.json", plan.before, plan.after);
    expect(created.split("\n").slice(0, 4)).toEqual(["--- /dev/null", "+++ b/.cursor/hooks.json", `@@ -0,0 +1,${plan.after!.split("\n").length - 1} @@`, "+{"]);
    expect(renderDiff("x", "a\nb\n", "a\nb\n")).toBe("");
    const before = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const after = before.replace("line 10\n", "line ten\n");
    expect(renderDiff("f.txt", before, after)).toBe(
      ["--- a/f.txt", "+++ b/f.txt", "@@ -8,7 +8,7 @@", " line 7", " line 8", " line 9", "-line 10", "+line ten", " line 11", " line 12", " line 13", ""].join("\n"),
    );
    const removed = renderDiff("f.txt", "a\n", null);
    expect(removed).toBe(["--- a/f.txt", "+++ /dev/null", "@@ -1,1 +0,0 @@", "-a", ""].join("\n"));
  });

  it("splits far-apart changes into hunks and stays linear-bounded on a huge rewrite", () => {
    const before = Array.from({ length: 40 }, (_, i) => `l${i}`).join("\n");
    const after = before.replace("l2\n", "L2\n").replace("l30\n", "L30\n");
    expect(renderDiff("f", before, after).match(/^@@/gm)).toHaveLength(2);
    const big = (tag: string) => Array.from({ length: 5000 }, (_, i) => `${tag}${i}`).join("\n");
    const diff = renderDiff("big", big("a"), big("b"));
    expect(diff.split("\n").filter((l) => l.startsWith("-a")).length).toBe(5000);
    expect(diff.split("\n").filter((l) => l.startsWith("+b")).length).toBe(5000);
  });
});
