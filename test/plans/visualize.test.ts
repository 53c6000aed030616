/**
 * visualize_plan: each diagram's exact text for a small plan, escaping of hostile text, determinism,
 * the bounds on a 200-step plan, drawing a saved plan by id and version, and the errors. That the
 * text is valid Mermaid is checked with Mermaid's own parser in test/e2e/plans-visualize.e2e.test.ts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { effortHours, MAX_DIAGRAM_CHARS, MAX_EDGES, MAX_FILE_LINKS, MAX_FILES } from "../../src/plans/diagrams/draw";
import { BIG, HOSTILE, PLAN } from "../fixtures/plans";
import { call, fails, newWorld, ok, refusedWithoutWrites, type Structured } from "../support/helpers";

const START = "2026-07-01T09:00:00.000Z";

const GANTT_HEAD = [
  "gantt",
  "    title Add rate limiting to the public API",
  "    dateFormat X",
  "    axisFormat %s",
  "    todayMarker off",
  "    %% One second on this chart is one hour of estimated effort (a day is 8 hours, a week 40): the axis counts hours from the start.",
];

const lines = (r: Structured) => (r.mermaid as string).split("\n");
const draw = (ctx: Ctx, plan: unknown, diagram_type?: string) => ok(ctx, "visualize_plan", { plan, ...(diagram_type ? { diagram_type } : {}) });

/** What a reader can see of plan rows: a read-only tool must leave them as they were. */
const planRows = (ctx: Ctx) => async () => ({
  plans: (await env.DB.prepare(`SELECT * FROM plans WHERE tenant_id = ? ORDER BY id`).bind(ctx.tenantId).all()).results,
  versions: (await env.DB.prepare(`SELECT * FROM plan_versions WHERE tenant_id = ? ORDER BY plan_id, version`).bind(ctx.tenantId).all()).results,
});

describe("visualize_plan", () => {
  describe("the three diagrams of a small plan", () => {
    it("dependencies (the default): a node per step in its milestone's subgraph, an arrow per depends_on, the critical path bold and classed", async () => {
      const w = await newWorld("viz", { start: START });
      const r = await draw(w.ctx, JSON.stringify(PLAN));
      expect(r).toMatchObject({ diagram_type: "dependencies", plan_id: "rate-limit", plan_version: 0, truncated: false, notes: [] });
      expect(lines(r)).toEqual([
        "flowchart TD",
        '    subgraph m1["Core"]',
        '        s1["1. Add a limiter module"]',
        '        s2["2. Wire it into the router"]',
        "    end",
        '    subgraph m2["Polish"]',
        '        s3["3. Document the limits"]',
        '        s4["4. Tests"]',
        "    end",
        '    s5["5. Announce"]',
        "    s1 ==> s2",
        "    s1 --> s3",
        "    s2 ==> s4",
        "    s3 --> s4",
        "    s4 ==> s5",
        "    classDef critical fill:#fde2e1,stroke:#c0392b,stroke-width:2px",
        "    class s1,s2,s4,s5 critical",
      ]);
    });

    it("architecture: files by directory, marked by what the plan does to each, an arrow from each step to the files it changes", async () => {
      const w = await newWorld("viz", { start: START });
      const r = await draw(w.ctx, PLAN, "architecture");
      expect(r).toMatchObject({ diagram_type: "architecture", truncated: false, notes: [] });
      expect(lines(r)).toEqual([
        "flowchart LR",
        '    s1["1. Add a limiter module"]',
        '    s2["2. Wire it into the router"]',
        '    s3["3. Document the limits"]',
        '    s4["4. Tests"]',
        '    subgraph d1["(root)"]',
        '        f1["README.md (modified)"]:::modified',
        "    end",
        '    subgraph d2["src/http"]',
        // Created in step 1 and changed again in step 2 ("./" and all): one node, still "created".
        '        f2["limit.ts (created)"]:::created',
        '        f3["router.ts (modified)"]:::modified',
        "    end",
        '    subgraph d3["test"]',
        '        f4["limit.test.ts (created)"]:::created',
        '        f5["old-limit.test.ts (deleted)"]:::deleted',
        "    end",
        "    s1 --> f2",
        "    s2 --> f2",
        "    s2 --> f3",
        "    s3 --> f1",
        "    s4 --> f4",
        "    s4 --> f5",
        "    classDef created fill:#dafbe1,stroke:#1a7f37",
        "    classDef deleted fill:#ffebe9,stroke:#cf222e,stroke-dasharray:4 3",
        "    classDef modified fill:#fff8c5,stroke:#9a6700",
      ]);
    });

    it("gantt: a section per milestone, a task per step after its dependencies, hours from estimated_effort, the critical path crit", async () => {
      const w = await newWorld("viz", { start: START });
      const r = await draw(w.ctx, PLAN, "gantt");
      expect(r).toMatchObject({ diagram_type: "gantt", truncated: false, notes: ["No effort estimate could be read for step(s) 4: 4 hours each."] });
      expect(lines(r)).toEqual([
        ...GANTT_HEAD,
        "    section Core",
        "    1. Add a limiter module :crit, s1, 0, 3s",
        "    2. Wire it into the router :crit, s2, after s1, 8s",
        "    section Polish",
        "    3. Document the limits :s3, after s1, 0.5s",
        "    4. Tests :crit, s4, after s2 s3, 4s",
        "    section Other steps",
        "    5. Announce :crit, s5, after s4, 1.5s",
      ]);
    });

    it("gantt keeps every task after its dependencies when milestones run against them, and has one section without milestones", async () => {
      const w = await newWorld("viz", { start: START });
      // Milestone "Later" lists step 1, which needs step 2 of milestone "First": the sections split rather than name a task not yet drawn.
      const r = await draw(
        w.ctx,
        {
          goal: "g",
          steps: [
            { step_number: 1, title: "b", depends_on: [2] },
            { step_number: 2, title: "a", estimated_effort: "2d" },
            { step_number: 3, title: "c", depends_on: [1], estimated_effort: "1 week" },
          ],
          milestones: [
            { name: "First", steps_included: [2, 3] },
            { name: "Later", steps_included: [1] },
          ],
        },
        "gantt",
      );
      expect(lines(r).slice(GANTT_HEAD.length)).toEqual([
        "    section First",
        "    2. a :crit, s2, 0, 16s",
        "    section Later",
        "    1. b :crit, s1, after s2, 4s",
        "    section First",
        "    3. c :crit, s3, after s1, 40s",
      ]);
      const flat = await draw(w.ctx, { goal: "g", steps: [{ step_number: 7, title: "only", estimated_effort: "90 minutes" }] }, "gantt");
      expect(lines(flat).slice(GANTT_HEAD.length)).toEqual(["    section Steps", "    7. only :crit, s7, 0, 1.5s"]);
    });

    it("the text content is the diagram in a mermaid fence, then the notes", async () => {
      const w = await newWorld("viz", { start: START });
      const result = await callTool(findTool("visualize_plan")!, w.ctx, { plan: PLAN, diagram_type: "gantt" });
      const text = (result.content as Array<{ text: string }>)[0]!.text;
      const r = result.structuredContent as Structured;
      expect(text).toBe(`Gantt chart of plan rate-limit:\n\n\`\`\`mermaid\n${r.mermaid}\n\`\`\`\n\n- No effort estimate could be read for step(s) 4: 4 hours each.`);
    });

    it("a plan without steps or without files still draws something, and a plan's own architecture diagram is named in the notes", async () => {
      const w = await newWorld("viz", { start: START });
      expect(lines(await draw(w.ctx, { goal: "Nothing yet" }))).toEqual(["flowchart TD", '    empty["The plan has no steps"]']);
      expect(lines(await draw(w.ctx, { goal: "Nothing yet" }, "gantt")).slice(GANTT_HEAD.length)).toEqual(["    section Steps", "    The plan has no steps :none, 0, 0s"]);
      const own = await draw(
        w.ctx,
        {
          goal: "Talk",
          steps: [{ step_number: 1, title: "Talk" }],
          architecture: { diagrams: [{ type: "architecture", title: "Boxes\nand arrows", mermaid: "graph TD\n  A-->B" }] },
        },
        "architecture",
      );
      expect(lines(own)).toEqual(["flowchart LR", '    empty["No step lists files to create, modify or delete"]']);
      expect(own.notes).toEqual([
        'The plan carries its own architecture diagram (architecture.diagrams, first: "Boxes and arrows"); load_plan returns it as written. This one is drawn from the files the steps change.',
      ]);
    });
  });

  describe("escaping what comes from the plan", () => {
    it("flowchart labels: quotes, #, %, &, <, > and backticks as entity codes, one line, cut at 60 characters; ids from step numbers", async () => {
      const w = await newWorld("viz", { start: START });
      const r = await draw(w.ctx, JSON.stringify(HOSTILE));
      expect(lines(r)).toEqual([
        "flowchart TD",
        '    subgraph m1["end"]',
        '        s1["1. end"]',
        '        s2["2. #38; #35;35; #37;#37; --#62; #34;quoted#34; [bracket] {brac…"]',
        "    end",
        '    subgraph m2["section: x; #35;y #37;z"]',
        '        s3["3. section Foo: bar; #35;hash #37;pct click"]',
        "    end",
        // A name with nothing printable gets one.
        '    subgraph m3["Milestone 3"]',
        '        s4["4. graph TD A--#62;Bx"]',
        "    end",
        // Escapes count in the bound; the emoji is two UTF-16 units, as Mermaid counts.
        `    s5["5. #96;tick#96; 日本語 🎉 ${"x".repeat(39)}…"]`,
        '    s6["6. "]',
        "    s1 ==> s2",
        "    s1 --> s3",
        "    s2 ==> s3",
        "    s3 ==> s4",
        "    s4 ==> s5",
        "    classDef critical fill:#fde2e1,stroke:#c0392b,stroke-width:2px",
        "    class s1,s2,s3,s4,s5 critical",
      ]);
    });

    it("gantt names: the characters that end a name, a section or a line become full-width; names start with the step number", async () => {
      const w = await newWorld("viz", { start: START });
      const r = await draw(w.ctx, JSON.stringify(HOSTILE), "gantt");
      expect(lines(r)).toEqual([
        "gantt",
        '    title end； title ％％{init： {"theme"："dark"}}％％ ＃ x： y section z',
        ...GANTT_HEAD.slice(2),
        "    section end",
        "    1. end :crit, s1, 0, 4s",
        '    2. & ＃35； ％％ --> "quoted" [bracket] {brace} <b>bold</b> :crit, s2, after s1, 4s',
        "    section section： x； ＃y ％z",
        "    3. section Foo： bar； ＃hash ％pct click :crit, s3, after s1 s2, 4s",
        "    section Milestone 3",
        "    4. graph TD A-->Bx :crit, s4, after s3, 4s",
        "    section Other steps",
        `    5. ｀tick｀ 日本語 🎉 ${"x".repeat(45)}… :crit, s5, after s4, 4s`,
        "    6.  :s6, 0, 4s",
      ]);
    });

    it("architecture: paths escaped like titles, control and bidi characters gone, a file called end is only a label", async () => {
      const w = await newWorld("viz", { start: START });
      const r = await draw(w.ctx, JSON.stringify(HOSTILE), "architecture");
      expect(lines(r)).toEqual([
        "flowchart LR",
        '    s1["1. end"]',
        '    s2["2. #38; #35;35; #37;#37; --#62; #34;quoted#34; [bracket] {brac…"]',
        '    s3["3. section Foo: bar; #35;hash #37;pct click"]',
        '    s4["4. graph TD A--#62;Bx"]',
        '    subgraph d1["(root)"]',
        '        f1["end (deleted)"]:::deleted',
        "    end",
        '    subgraph d2["#37;#37;{init}#37;#37;/end"]',
        '        f2["subgraph.ts (modified)"]:::modified',
        "    end",
        '    subgraph d3["dir/with newline"]',
        '        f3["andbidi.ts (modified)"]:::modified',
        "    end",
        '    subgraph d4["src/#34;quoted#34;/[brackets]"]',
        '        f4["a;b#35;c.ts (created)"]:::created',
        "    end",
        "    s1 --> f4",
        "    s2 --> f2",
        "    s3 --> f1",
        "    s4 --> f3",
        "    classDef created fill:#dafbe1,stroke:#1a7f37",
        "    classDef deleted fill:#ffebe9,stroke:#cf222e,stroke-dasharray:4 3",
        "    classDef modified fill:#fff8c5,stroke:#9a6700",
      ]);
    });

    it("a long directory keeps its end, and an escape is never cut in half", async () => {
      const w = await newWorld("viz", { start: START });
      const dir = `${"a".repeat(50)}/${"b".repeat(20)}/deep`;
      const r = await draw(w.ctx, { goal: "g", steps: [{ step_number: 1, title: `${"y".repeat(55)}"""`, files_to_modify: [{ path: `${dir}/f.ts` }] }] }, "architecture");
      const text = r.mermaid as string;
      // 55 y's and one #34; (4 characters) fill 59; a second would pass 60.
      expect(text).toContain(`s1["1. ${"y".repeat(55)}#34;…"]`);
      expect(text).toContain(`subgraph d1["…${`${"a".repeat(50)}/${"b".repeat(20)}/deep`.slice(-59)}"]`);
    });
  });

  describe("determinism", () => {
    it("the same plan gives the same text, whatever the key order or whether it came as a string, an object or from the store", async () => {
      const w = await newWorld("viz", { start: START });
      const reordered = Object.fromEntries(Object.entries(PLAN).reverse());
      await ok(w.ctx, "save_plan", { plan: PLAN });
      for (const diagram_type of ["dependencies", "architecture", "gantt"]) {
        const first = await draw(w.ctx, JSON.stringify(PLAN), diagram_type);
        expect((await draw(w.ctx, PLAN, diagram_type)).mermaid).toBe(first.mermaid);
        expect((await draw(w.ctx, reordered, diagram_type)).mermaid).toBe(first.mermaid);
        expect((await ok(w.ctx, "visualize_plan", { plan_id: "rate-limit", diagram_type })).mermaid).toBe(first.mermaid);
      }
    });
  });

  describe("bounds: a 200-step plan", () => {
    const edges = (text: string) => text.split("\n").filter((l) => /^ {4}s\d+ (-->|==>) [sf]\d+$/.test(l));

    it("stays within Mermaid's limits in every diagram and says what it left out", async () => {
      const w = await newWorld("viz", { start: START });
      expect(JSON.stringify(BIG).length).toBeLessThan(256 * 1024);
      const deps = await draw(w.ctx, BIG);
      expect((deps.mermaid as string).length).toBeLessThanOrEqual(MAX_DIAGRAM_CHARS);
      expect(lines(deps).filter((l) => /^ {8}s\d+\["/.test(l))).toHaveLength(200);
      // 7,180 dependencies, of which a chain of 199 implies all the others: nothing of the order is lost.
      expect(edges(deps.mermaid)).toHaveLength(199);
      expect(deps).toMatchObject({ truncated: false, notes: ["6981 of 7180 dependencies are not drawn: a longer chain of drawn ones implies each (the order shown is the same)."] });

      const arch = await draw(w.ctx, BIG, "architecture");
      expect((arch.mermaid as string).length).toBeLessThanOrEqual(MAX_DIAGRAM_CHARS);
      expect(lines(arch).filter((l) => /^ {8}f\d+\["/.test(l))).toHaveLength(MAX_FILES);
      expect(edges(arch.mermaid)).toHaveLength(MAX_FILE_LINKS);
      expect(arch.truncated).toBe(true);
      expect(arch.notes[0]).toBe(`${MAX_FILES} of 300 files are drawn: the ones the most steps change.`);
      expect(arch.notes[1]).toMatch(/^200 of \d+ links from steps to files are drawn, in step order; steps \d+/);

      const gantt = await draw(w.ctx, BIG, "gantt");
      expect((gantt.mermaid as string).length).toBeLessThanOrEqual(MAX_DIAGRAM_CHARS);
      const tasks = lines(gantt).filter((l) => / :(crit, )?s\d+, /.test(l));
      expect(tasks).toHaveLength(200);
      // Naming all 7,180 dependencies would not fit: each task names the one that ends last, which is one it has.
      for (const t of tasks) {
        const [, n, after] = /:(?:crit, )?s(\d+), (?:after s(\d+)|0), /.exec(t)!;
        const step = BIG.steps[Number(n) - 1]!;
        if (after === undefined) expect(step.depends_on).toEqual([]);
        else expect(step.depends_on).toContain(Number(after));
      }
      expect(gantt.notes).toEqual(["Each task is drawn after only the dependency that finishes last (naming them all would pass Mermaid's size limit); the schedule is the same."]);
    });

    it("past the edge limit even without implied edges, keeps the critical path and says which steps lose dependencies", async () => {
      const w = await newWorld("viz", { start: START });
      // 30 steps, then 30 that each need all of the first 30: 900 dependencies, none implied by another.
      const steps = [
        ...Array.from({ length: 30 }, (_, i) => ({ step_number: i + 1, title: `a${i + 1}` })),
        ...Array.from({ length: 30 }, (_, i) => ({ step_number: i + 31, title: `b${i + 1}`, depends_on: Array.from({ length: 30 }, (_, k) => k + 1) })),
      ];
      const r = await draw(w.ctx, { goal: "g", steps });
      const drawn = edges(r.mermaid);
      expect(drawn).toHaveLength(MAX_EDGES);
      expect(drawn).toContain("    s1 ==> s31");
      expect(r.truncated).toBe(true);
      expect(r.notes).toEqual([
        "400 of 900 dependencies are left out to stay within Mermaid's 500 edges: some or all of those of steps 47, 48, 49, 50, 51, 52, 53, 54, 55, 56 and 4 more; load_plan has them all.",
      ]);
    });
  });

  describe("a saved plan, by plan_id and version", () => {
    it("draws the current version, or the one asked for, with the plan's id and version", async () => {
      const w = await newWorld("viz", { start: START });
      await ok(w.ctx, "save_plan", { plan: PLAN });
      const changed = { ...PLAN, steps: [...PLAN.steps, { step_number: 6, title: "Celebrate", depends_on: [5] }] };
      await ok(w.ctx, "save_plan", { plan: changed, overwrite: true });
      const current = await ok(w.ctx, "visualize_plan", { plan_id: "rate-limit" });
      expect(current).toMatchObject({ diagram_type: "dependencies", plan_id: "rate-limit", plan_version: 2 });
      expect(current.mermaid).toContain('    s6["6. Celebrate"]');
      const first = await ok(w.ctx, "visualize_plan", { plan_id: "rate-limit", version: 1 });
      expect(first).toMatchObject({ plan_version: 1 });
      expect(first.mermaid).toBe((await draw(w.ctx, PLAN)).mermaid);
    });

    it("a missing plan or version is not_found, and another tenant's plan is not_found too", async () => {
      const a = await newWorld("viz-a", { start: START });
      const b = await newWorld("viz-b", { start: START });
      await ok(a.ctx, "save_plan", { plan: PLAN });
      expect(await fails(a.ctx, "visualize_plan", { plan_id: "nope" })).toMatchObject({ code: "not_found", message: "Plan nope not found" });
      expect(await fails(a.ctx, "visualize_plan", { plan_id: "rate-limit", version: 3 })).toMatchObject({ code: "not_found", message: "Version 3 not found for plan rate-limit" });
      const other = await refusedWithoutWrites(b.ctx, "visualize_plan", { plan_id: "rate-limit", diagram_type: "gantt" }, "not_found", planRows(a.ctx));
      expect(other.message).toBe("Plan rate-limit not found");
    });
  });

  describe("errors", () => {
    const refused = async (args: Record<string, unknown>, message: RegExp) => {
      const w = await newWorld("viz", { start: START });
      await ok(w.ctx, "save_plan", { plan: PLAN });
      const err = await refusedWithoutWrites(w.ctx, "visualize_plan", args, "invalid_input", planRows(w.ctx));
      expect(err.message).toMatch(message);
    };

    it("text that is not JSON", () => refused({ plan: "{not json" }, /^plan must be valid JSON$/));
    it("JSON that is not an object", () => refused({ plan: "[1]" }, /^plan must be a JSON object$/));
    it("an invalid plan, naming the step", () => refused({ plan: { goal: "g", steps: [{ step_number: 1, title: "a", depends_on: [2] }] } }, /Step 1 depends on step 2, which is not in the plan/));
    it("a dependency cycle", () =>
      refused(
        {
          plan: {
            goal: "g",
            steps: [
              { step_number: 1, title: "a", depends_on: [2] },
              { step_number: 2, title: "b", depends_on: [1] },
            ],
          },
        },
        /dependency cycle/,
      ));
    it("both plan and plan_id", () => refused({ plan: PLAN, plan_id: "rate-limit" }, /^Pass plan or plan_id, not both\.$/));
    it("neither plan nor plan_id", () => refused({ diagram_type: "gantt" }, /^Either plan or plan_id is required$/));
    it("version without plan_id", () => refused({ plan: PLAN, version: 1 }, /^version goes with plan_id\.$/));
    it("an unknown diagram_type", () => refused({ plan: PLAN, diagram_type: "sequence" }, /diagram_type/));
    it("an unknown parameter", () => refused({ plan: PLAN, format: "svg" }, /format/));
    it("a bad version number", () => refused({ plan_id: "rate-limit", version: 0 }, /version/));

    it("answers the envelope's hint with every refusal", async () => {
      const w = await newWorld("viz", { start: START });
      const r = await call(w.ctx, "visualize_plan", {});
      expect(r.error.hint).toContain("plan_id");
    });
  });
});

describe("effort estimates", () => {
  it.each([
    ["2-3 hours", 3],
    ["1 day", 8],
    ["30m", 0.5],
    ["1h 30m", 1.5],
    ["2 weeks", 80],
    ["1.5d", 12],
    ["2 to 3 days", 24],
    ["3 hrs", 3],
    ["45 minutes", 0.75],
    ["4h", 4],
    ["1 month", 160],
    ["3–5 hours", 5],
  ])("%s is %d hours", (text, hours) => expect(effortHours(text)).toBeCloseTo(hours, 6));

  it.each(["", "half a day", "medium", "10 story points", "2 devs"])("%j is unreadable", (text) => expect(effortHours(text)).toBeNull());
});
