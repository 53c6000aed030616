import { describe, expect, it } from "vitest";
import { EXIT, plain, printResult, readable, type Out } from "../../src/cli/output";

function capture(json: boolean): Out & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { json, tty: false, out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t) };
}

describe("command-line output", () => {
  it("renders fields plainly, leaving out the envelope's empty values", () => {
    expect(plain({ id: "e1", diff: "", metadata: {}, items: [], tags: ["a", "b"], nested: { k: 1 } })).toBe("id: e1\nitems:\n  (none)\ntags:\n  - a\n  - b\nnested:\n  k: 1");
  });

  it("a Markdown rendering is printed as it is; a summary line leads the fields", () => {
    expect(readable({ ok: true, groups: [] }, "# git_log\n\n(no commits)")).toBe("# git_log\n\n(no commits)");
    expect(readable({ ok: true, id: "e1" }, "Logged e1.")).toBe("Logged e1.\nid: e1");
  });

  it("an error goes to stderr with its hint and exits 1; --json prints the envelope on stdout", () => {
    const human = capture(false);
    const envelope = { ok: false, error: { code: "not_found", message: "No such task.", hint: "task_query lists tasks.", retryable: false } };
    expect(printResult(human, envelope, "")).toBe(EXIT.toolError);
    expect(human.err).toEqual(["error: not_found: No such task.", "hint: task_query lists tasks."]);
    expect(human.out).toEqual([]);
    const machine = capture(true);
    expect(printResult(machine, envelope, "")).toBe(1);
    expect(JSON.parse(machine.out[0]!)).toEqual(envelope);
  });

  it("success exits 0", () => {
    const o = capture(true);
    expect(printResult(o, { ok: true, n: 1 }, "x")).toBe(EXIT.ok);
    expect(JSON.parse(o.out[0]!)).toEqual({ ok: true, n: 1 });
  });
});
