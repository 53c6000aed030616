/** The extractor of documented example calls (test/support/doc-examples.ts), from Node as the end-to-end test uses it. */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  asCall,
  codePieces,
  collectExamples,
  docPages,
  examplesInMarkdown,
  examplesInSource,
  examplesInText,
  fillPlaceholders,
  FromAnswers,
  hiddenExamples,
  Placeholder,
} from "../support/doc-examples";

describe("examplesInText", () => {
  it("reads a tool's name followed by a flow mapping, in JSON or YAML, with the line it starts on", () => {
    const text = 'Orient. whoami. task_claim { task_id: "WEB-12" } then\nquery {"op": "describe", "params": {"target": "task_claim"}} and mcp.echo {"message": "hi"}';
    const found = examplesInText(text, "x.md", 10);
    expect(found.map((e) => [e.tool, e.line, e.args])).toEqual([
      ["task_claim", 10, { task_id: "WEB-12" }],
      ["query", 11, { op: "describe", params: { target: "task_claim" } }],
      ["mcp.echo", 11, { message: "hi" }],
    ]);
    expect(found[0]!.text).toBe('task_claim { task_id: "WEB-12" }');
  });

  it("skips words that are not tools, tools not followed by a mapping, and names inside longer words", () => {
    const text = "function { a: 1 } whoami (who you are) my_task_claim { a: 1 } task_claim_x { a: 1 } x.task_claim.y { a: 1 }";
    expect(examplesInText(text, "x.md")).toEqual([]);
  });

  it("reads a mapping across lines and past braces inside its strings", () => {
    const [e] = examplesInText('review_settings {repo: "a/b",\n  hotspots: ["src/{a,b}/**"]} after', "x.md");
    expect(e!.args).toEqual({ repo: "a/b", hotspots: ["src/{a,b}/**"] });
  });

  it("marks placeholders: '<name>' strings and bare keys", () => {
    const [e] = examplesInText('task_update { task_id: "WEB-12", patch: { reviewer_actor_id: "<reviewer>" }, fencing_token }', "x.md");
    expect(e!.sketch).toBe(false);
    expect(e!.args).toEqual({ task_id: "WEB-12", patch: { reviewer_actor_id: new Placeholder("reviewer") }, fencing_token: new Placeholder("fencing_token") });
  });

  it("treats a mapping with ..., … or an optional key as a sketch", () => {
    const sketches = ['handoff_create { kind: "review", ... }', 'docs_session {"action": "pin", "params": {"hash": …}}', "reactive_review_pr {repo, pull_number?}", "inbox { ack: [a, ...] }"];
    for (const s of sketches) expect(examplesInText(s, "x.md")[0]!.sketch, s).toBe(true);
    expect(examplesInText("reactive_review_pr {repo, pull_number?}", "x.md")[0]!.args).toEqual({ repo: new Placeholder("repo"), pull_number: new Placeholder("pull_number") });
  });

  it("fails on an unclosed or unreadable mapping, naming where it is written", () => {
    expect(() => examplesInText("a\ntask_claim { task_id: ", "README.md")).toThrow(/^README\.md:2: task_claim \{ … has no closing brace/);
    expect(() => examplesInText("task_claim { a: [1, 2 }", "docs/x.md")).toThrow(/^docs\/x\.md:1: /);
    expect(() => examplesInText("task_claim { a: b: c }", "docs/x.md")).toThrow(/not a flow mapping/);
  });
});

describe("examplesInSource", () => {
  it("reads string literals, template texts and joined literals, never comments or code", () => {
    const code = [
      'import { x } from "task_claim {a: 1}";',
      '// task_claim { task_id: "in a comment" }',
      "const a = { task_claim: 1 }; if (task_claim) { run(); }",
      'const hint = "Start one with index_workspace {repo: \\"owner/name\\"} and wait.";',
      'const t = `Wait (handoff_query { related_task_id: "${task.ref}" } shows it)`;',
      'const joined = "call handoff_resolve { handoff_id: " +\n  "\\"h1\\", resolution: \\"cancelled\\" }";',
    ].join("\n");
    const found = examplesInSource(code, "src/x.ts");
    expect(found.map((e) => [e.tool, e.line, e.args])).toEqual([
      ["index_workspace", 4, { repo: "owner/name" }],
      // A value the program computes is the run's to supply, named by its key.
      ["handoff_query", 5, { related_task_id: new Placeholder("related_task_id") }],
      ["handoff_resolve", 6, { handoff_id: "h1", resolution: "cancelled" }],
    ]);
  });
});

describe("fillPlaceholders", () => {
  const [e] = examplesInMarkdown('handoff_claim { handoff_id, note: "<note>", ids: ["<id>"] }', "docs/work.md");

  it("takes the newest earlier answer's field of that name, then a binding", () => {
    const answers = [
      { ok: true, handoff_id: "old", id: "i0" },
      { ok: true, items: [{ handoff: { handoff_id: "new" } }] },
    ];
    expect(fillPlaceholders(e!, answers, { note: "n", id: "bound" })).toEqual({ handoff_id: "new", note: "n", ids: ["i0"] });
  });

  it("takes a binding computed from the answers", () => {
    const answers = [{ review_handoff: { id: "r1" } }];
    const args = fillPlaceholders(e!, answers, { handoff_id: new FromAnswers((a) => (a.at(-1) as { review_handoff: { id: string } }).review_handoff.id), note: "n", id: "i" });
    expect(args.handoff_id).toBe("r1");
  });

  it("fails naming the example, its source and the value nothing fills", () => {
    expect(() => fillPlaceholders(e!, [{ ok: true }], { note: "n" })).toThrow(/^docs\/work\.md:1: handoff_claim \{ handoff_id, .*: nothing fills 'handoff_id'/);
  });
});

describe("codePieces", () => {
  it("reads inline spans (any backtick run, across a line break, not past a paragraph) and data fences, with their lines", () => {
    const md = [
      "Text `a: 1` and ``b `c` d`` then `open",
      "close` here.",
      "",
      "`not closed",
      "",
      "`in another paragraph`",
      "```json",
      '{"x": 1}',
      "```",
      "```sh",
      "curl -H 'Authorization: Bearer k'",
      "```",
      "~~~",
      "y: 2",
      "~~~",
    ].join("\n");
    expect(codePieces(md)).toEqual([
      { line: 1, text: "a: 1", fenced: false },
      { line: 1, text: "b `c` d", fenced: false },
      { line: 1, text: "open close", fenced: false },
      { line: 6, text: "in another paragraph", fenced: false },
      { line: 8, text: '{"x": 1}', fenced: true },
      { line: 14, text: "y: 2", fenced: true },
    ]);
  });
});

describe("hiddenExamples", () => {
  const params = new Map([
    ["docs_query", new Set(["steps"])],
    ["query", new Set(["op", "params", "steps"])],
    ["execute", new Set(["op", "params", "operations", "continue_on_error"])],
    ["task_claim", new Set(["task_id", "project_id", "lease_seconds"])],
    ["fail_step", new Set(["plan_id", "step_number", "error"])],
  ]);
  const found = (md: string) => hiddenExamples(md, "docs/x.md", params).map(asCall);

  it("reports call arguments written without the call, naming the page, the line and the tools they fit", () => {
    const md = [
      "# Page",
      "",
      'Discovery: `{"op": "describe", "params": {"target": "search"}}` returns a schema;',
      'a pipeline is `{steps: [{op, params}]}`, and `{ task_id: "WEB-1", lease_seconds: 60 }` claims.',
      "",
      "```yaml",
      "plan_id: p1",
      "step_number: 2",
      "error: tests fail",
      "```",
    ].join("\n");
    expect(found(md)).toEqual([
      'docs/x.md:3: write it as a call: query {"op": "describe", "params": {"target": "search"}} (or execute {…})',
      "docs/x.md:4: write it as a call: docs_query {steps: [{op, params}]} (or query {…})",
      'docs/x.md:4: write it as a call: task_claim { task_id: "WEB-1", lease_seconds: 60 }',
      "docs/x.md:7: write it as a call: fail_step plan_id: p1 step_number: 2 error: tests fail",
    ]);
  });

  it("leaves out calls, answer shapes, one parameter's value in prose, keys no tool takes and non-data fences", () => {
    const md = [
      'Run `query {"op": "describe"}` or `task_claim { task_id: "WEB-1" }`.',
      "Every tool answers `{ ok: false, error: { code, message, hint, retryable } }` or `{ isError: true }`;",
      "a failed step is `{ error: { code, message } }`; pipelines answer `{steps: [{stepIndex, op, result}], totalSteps}`",
      'and lists `{ items, next_cursor? }`. Pass `task_id: "WEB-1"` to name one; a preset is `{"nestedRoots": ["a/b"]}`.',
      "Not YAML: `{a: [1, 2}` and `{}`.",
      "",
      "```ts",
      "const x = { task_id: 1 };",
      "```",
      "```json",
      '{ "jsonrpc": "2.0", "error": { "code": -32000 } }',
      "```",
    ].join("\n");
    expect(found(md)).toEqual([]);
  });

  it("reads a sketch's optional keys and ... entries as the keys they name", () => {
    expect(found("`{task_id?, ...}`")).toEqual(["docs/x.md:1: write it as a call: task_claim {task_id?, ...}"]);
  });
});

describe("collectExamples", () => {
  it("reads README.md, every docs/**/*.md, each guide topic and src/**/*.ts, in that order, leaving out sources without examples", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "doc-examples-"));
    try {
      await mkdir(path.join(root, "docs", "systems"), { recursive: true });
      await mkdir(path.join(root, "src", "guide"), { recursive: true });
      await writeFile(path.join(root, "README.md"), "Run `whoami {}`.\n");
      await writeFile(path.join(root, "docs", "systems", "work.md"), '# Work\n\n`task_claim { task_id: "WEB-1" }`\n');
      await writeFile(path.join(root, "docs", "empty.md"), "No calls here.\n");
      await writeFile(path.join(root, "src", "guide", "topics.ts"), 'export const T = [{ id: "walk", title: "W", body: `1. whoami {}\n2. task_claim { task_id: "WEB-12" }` }];\n');
      await writeFile(path.join(root, "src", "hint.ts"), 'export const H = "Try inbox { ack: [\\"a\\"] }.";\n');
      const found = collectExamples(root);
      expect([...found.keys()]).toEqual(["README.md", "docs/systems/work.md", "guide:walk", "src/hint.ts"]);
      expect(found.get("guide:walk")!.map((e) => [e.tool, e.line])).toEqual([
        ["whoami", 1],
        ["task_claim", 2],
      ]);
      expect(found.get("docs/systems/work.md")![0]!.line).toBe(3);
      // The pages the hidden-example guard reads: every one, with or without examples.
      expect([...docPages(root).keys()]).toEqual(["README.md", "docs/empty.md", "docs/systems/work.md"]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("finds this repository's examples: the README's, the walkthrough's and the hints'", () => {
    const found = collectExamples(path.resolve(import.meta.dirname, "../.."));
    expect(found.get("guide:walkthrough")!.filter((e) => !e.sketch).length).toBeGreaterThanOrEqual(10);
    expect([...found.keys()].some((s) => s.startsWith("src/"))).toBe(true);
  });
});
