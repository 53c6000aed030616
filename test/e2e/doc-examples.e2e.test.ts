/**
 * Every example call the project documents, run as written against `wrangler dev` with the SDK client: the README and
 * docs/ pages, the guide's topics, and the hints and descriptions in src/ (test/support/doc-examples.ts extracts them).
 * A changed tool that breaks its own documentation fails here. Then the walkthrough, as an agent follows it.
 */
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { executeSql, type Target } from "../../scripts/wrangler";
import { provisionKey } from "../../src/auth/provision";
import { asCall, collectExamples, docPages, fillPlaceholders, FromAnswers, guideTopics, hiddenExamples, type Bindings, type DocExample, type ToolParams } from "../support/doc-examples";

const ROOT = path.resolve(import.meta.dirname, "../..");
const baseUrl = inject("baseUrl");
const target: Target = { persistTo: inject("persistTo"), env: { XDG_CONFIG_HOME: inject("configHome") } };

type S = Record<string, unknown> & { ok?: boolean; error?: { code: string; message: string; hint?: string } };

async function connect(key: string, query: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp${query}`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new Client({ name: "doc-examples", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** Codes that say the example itself is wrong (its shape, its tool, its op), not the state it met. */
const SHAPE_ERRORS = new Set(["invalid_input", "unknown_parameter", "unknown_tool", "unknown_op", "tool_not_on_surface", "internal_error"]);

const COMPACT = new Set(["query", "execute", "session"]);

/**
 * Where a source's examples run: the one rule for every source. Every named tool (docs_* too) runs on ?toolsets=all. `query`, `execute` and `session` are compact mode's, run with every toolset, except on two pages:
 * docs/protocol.md promises its compact examples run on /mcp?mode=compact as written, so the page runs twice, there
 * and with every toolset, each pass on a fresh tenant; docs/docs-store.md writes seed 003's bare names for the
 * document store's tools, which answer on its surface. Each entry is one pass over the source: the surface its
 * compact names run on.
 */
function passesFor(source: string): string[] {
  if (source === "docs/protocol.md") return ["?mode=compact", "?mode=compact&toolsets=all"];
  if (source === "docs/docs-store.md") return ["?toolsets=docs"];
  return ["?mode=compact&toolsets=all"];
}
// docs_* too: on ?toolsets=docs alone the store lists its tools under the seed's names (query, …), not as docs_*.
const surfaceFor = (tool: string, compact: string): string => (COMPACT.has(tool) ? compact : "?toolsets=all");

/**
 * Pages whose examples promise to run as written on a fresh tenant (docs/protocol.md: "each runnable as written"): there
 * every answer is ok and no pipeline step fails, not only free of shape errors.
 */
const RUN_CLEAN = new Set(["docs/protocol.md"]);

/** Every tool's parameters, as the surfaces that run examples list them (compact mode's three included). */
async function toolParams(key: string): Promise<ToolParams> {
  const out = new Map<string, Set<string>>();
  for (const query of ["?toolsets=all", "?mode=compact&toolsets=all"]) {
    const client = await connect(key, query);
    try {
      for (const t of (await client.listTools()).tools) out.set(t.name, new Set(Object.keys(t.inputSchema.properties ?? {})));
    } finally {
      await client.close();
    }
  }
  return out;
}

/** Every error in an answer: its own, and each failed step of a pipeline or batch. */
function errorsIn(answer: S): Array<{ code: string; message: string }> {
  const out: Array<{ code: string; message: string }> = [];
  const visit = (v: unknown, depth: number): void => {
    if (depth > 6 || !v || typeof v !== "object") return;
    const e = (v as { error?: unknown }).error;
    if (e && typeof e === "object" && typeof (e as { code?: unknown }).code === "string") out.push(e as { code: string; message: string });
    for (const child of Object.values(v)) if (typeof child === "object") visit(child, depth + 1);
  };
  visit(answer, 0);
  return out;
}

/** A tenant per source: an author (the caller) and a reviewer, made as the keys command makes them, in one batch. */
interface Tenant {
  agent: string;
  reviewer: string;
}
async function makeTenants(slugs: string[]): Promise<Map<string, Tenant>> {
  const out = new Map<string, Tenant>();
  const statements: string[] = [];
  for (const slug of slugs) {
    const agent = await provisionKey(slug, "agent");
    const reviewer = await provisionKey(slug, "alice");
    statements.push(...agent.statements, ...reviewer.statements);
    out.set(slug, { agent: agent.key, reviewer: reviewer.key });
  }
  await executeSql(statements, target);
  return out;
}

const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<S> => (await client.callTool({ name, arguments: args })).structuredContent as S;

/** The plan the fixture saves, as an agent edits it before saving the next version. */
const PLAN = {
  id: "doc-plan",
  goal: "Add rate limiting",
  steps: [
    { step_number: 1, title: "Add a limiter" },
    { step_number: 2, title: "Test it", depends_on: [1] },
  ],
};

const REPO = "acme/web";

interface Fixture {
  reviewerId: string;
  handoffId: string;
  requestId: string;
}

/**
 * The fixture each source's examples meet (as the walkthrough needs): project WEB with tasks WEB-1 … WEB-12, WEB-12
 * requiring evidence; a question from the caller to the reviewer about WEB-1; the plan PLAN, sent to the reviewer for
 * approval; the repository REPO.
 */
async function fixture(t: Tenant): Promise<Fixture> {
  const agent = await connect(t.agent, "?toolsets=all");
  const reviewer = await connect(t.reviewer, "");
  try {
    const ok = async (name: string, args: Record<string, unknown>) => {
      const r = await call(agent, name, args);
      expect(r, `fixture: ${name}`).toMatchObject({ ok: true });
      return r;
    };
    await ok("project_create", { title: "Web", key: "WEB" });
    await ok("task_create_many", { project_id: "WEB", tasks: Array.from({ length: 12 }, (_, i) => ({ title: `task ${i + 1}` })) });
    await ok("task_update", { task_id: "WEB-12", patch: { requires_evidence: true } });
    await ok("save_plan", { plan: PLAN });
    await ok("repo_register", { remote_url: REPO });
    const reviewerId = ((await call(reviewer, "whoami", {})).actor as { id: string }).id;
    const question = await ok("handoff_create", { kind: "question", to_actor_ids: [reviewerId], title: "Which cache?", related_task_id: "WEB-1" });
    const approval = await ok("request_approval", { plan_id: PLAN.id, approver_actor_ids: [reviewerId] });
    return { reviewerId, handoffId: (question.handoff as { id: string }).id, requestId: (approval.request as { id: string }).id };
  } finally {
    await agent.close();
    await reviewer.close();
  }
}

/** The newest earlier answer's value at a path (`review_handoff.id`). */
function newestAt(answers: readonly unknown[], dotted: string): unknown {
  for (const a of [...answers].reverse()) {
    const v = dotted.split(".").reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined), a);
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * Values for placeholders no earlier answer of the run fills, documented here: `<reviewer>` is the fixture's second
 * actor, `<sha>` a commit, `note` free text, `task_id` and `related_task_id` the fixture's WEB-12, `<plan>` the fixture's
 * plan edited, `repo` the fixture's repository, `request_id` its approval request, and `handoff_id` the review the run's status move opened (its answer's
 * review_handoff.id), else the fixture's question.
 */
const bindings = (f: Fixture): Bindings => ({
  reviewer: f.reviewerId,
  sha: "0123456789abcdef0123456789abcdef01234567",
  note: "handing over",
  task_id: "WEB-12",
  related_task_id: "WEB-12",
  repo: REPO,
  request_id: f.requestId,
  plan: { ...PLAN, goal: "Add rate limiting, per key" },
  handoff_id: new FromAnswers((answers) => newestAt(answers, "review_handoff.id") ?? f.handoffId),
});

/** Calls an example with its placeholders filled; a JSON-RPC error fails naming the example. */
async function callExample(client: Client, e: DocExample, answers: unknown[], b: Bindings): Promise<Awaited<ReturnType<Client["callTool"]>>> {
  const args = fillPlaceholders(e, answers, b);
  try {
    return await client.callTool({ name: e.tool, arguments: args });
  } catch (err) {
    throw new Error(`${where(e)}: ${String(err)}`, { cause: err });
  }
}

const where = (e: DocExample) => `${e.source}:${e.line}: ${e.text.replace(/\s+/g, " ").slice(0, 160)}`;

/** README.md and the docs/ pages (as against the guide and src/). */
const isPage = (source: string) => source === "README.md" || source.startsWith("docs/");

const sources = collectExamples(ROOT);
/** One run of a source's examples on a tenant of its own. */
const runs = [...sources].flatMap(([source, examples], i) => passesFor(source).map((compact, pass) => ({ source, examples, compact, slug: `doc-ex-${i}-${pass}` })));

describe("documented examples, as written", () => {
  let tenants: Map<string, Tenant>;
  const counts: Record<string, number> = {};

  beforeAll(async () => {
    tenants = await makeTenants(runs.map((r) => r.slug));
  }, 120_000);
  afterAll(() => {
    console.log(
      `Documented examples run, by source:\n${Object.entries(counts)
        .map(([s, n]) => `  ${s}: ${n}`)
        .join("\n")}`,
    );
  });

  it("finds examples in the README, the guide's walkthrough and the hints in src/", () => {
    const total = (pick: (s: string) => boolean) => [...sources].filter(([s]) => pick(s)).reduce((n, [, e]) => n + e.length, 0);
    // An emptied document cannot pass: each kind of source keeps examples to run.
    expect(total(isPage), "examples in README.md and docs/").toBeGreaterThanOrEqual(5);
    expect(sources.get("guide:walkthrough")?.filter((e) => !e.sketch).length ?? 0, "calls in the walkthrough").toBeGreaterThanOrEqual(10);
    expect(
      total((s) => s.startsWith("src/")),
      "examples in src/ strings",
    ).toBeGreaterThanOrEqual(5);
  });

  it("no example hides: call arguments in README.md and docs/ are written as calls, so they run", async () => {
    const params = await toolParams(tenants.get(runs[0]!.slug)!.agent);
    expect(params.get("docs_query")?.has("steps"), "the listing gives parameters").toBe(true);
    const hidden = [...docPages(ROOT)].flatMap(([source, text]) => hiddenExamples(text, source, params));
    expect(hidden.map(asCall)).toEqual([]);
  });

  for (const { source, examples, compact, slug } of runs) {
    const label = passesFor(source).length > 1 ? ` (compact names on ${compact})` : "";
    it(`${source}: each of its ${examples.length} examples runs${label}`, { timeout: 120_000 }, async () => {
      const t = tenants.get(slug)!;
      const f = await fixture(t);
      const clients = new Map<string, Client>();
      const answers: unknown[] = [];
      try {
        for (const e of examples) {
          const query = surfaceFor(e.tool, compact);
          if (!clients.has(query)) clients.set(query, await connect(t.agent, query));
          const client = clients.get(query)!;
          const on = `${where(e)} (on ${query})`;
          if (e.sketch) {
            // A sketch names parameters without values: each must be one the tool takes.
            const { tools } = await client.listTools();
            const props = Object.keys((tools.find((x) => x.name === e.tool)?.inputSchema.properties ?? {}) as object);
            expect(props, `${on}: ${e.tool} is listed with parameters`).not.toHaveLength(0);
            expect(props, on).toEqual(expect.arrayContaining(Object.keys(e.args)));
            continue;
          }
          const r = await callExample(client, e, answers, bindings(f));
          const answer = r.structuredContent as S | undefined;
          expect(answer, `${on}: no structured answer (${JSON.stringify(r.content).slice(0, 300)})`).toBeDefined();
          if (RUN_CLEAN.has(source)) expect(errorsIn(answer!), on).toEqual([]);
          else
            expect(
              errorsIn(answer!).filter((x) => SHAPE_ERRORS.has(x.code)),
              on,
            ).toEqual([]);
          answers.push(answer);
        }
      } finally {
        for (const c of clients.values()) await c.close();
      }
      counts[source] = examples.length;
    });
  }
});

/** The walkthrough's step an example is written in ("7. Review …"), from the topic's text. */
function stepOf(e: DocExample): number {
  const topic = guideTopics(ROOT).find((t) => `guide:${t.id}` === e.source)!;
  const lines = topic.body.split("\n").slice(0, e.line - topic.line + 1);
  const numbered = lines.map((l) => /^(\d+)\. /.exec(l)?.[1]).filter((n) => n !== undefined);
  return Number(numbered.at(-1) ?? 0);
}

/** The other branch of step 6 ("to hand the work itself to someone else instead"): an agent asking for review does not take it. */
const NOT_TAKEN = new Set(["task_release"]);

describe("the walkthrough, as an agent follows it", () => {
  it("claims, logs, asks for review, is approved by the reviewer (step 7, a second key) and finishes the task", { timeout: 120_000 }, async () => {
    const t = (await makeTenants(["doc-walkthrough"])).get("doc-walkthrough")!;
    const f = await fixture(t);
    const walk = collectExamples(ROOT).get("guide:walkthrough")!;
    // The surface the walkthrough tells the agent to connect to (step 5); the reviewer stays on the default one.
    const surface = /\/mcp(\?toolsets=[a-z,]+)/.exec(guideTopics(ROOT).find((x) => x.id === "walkthrough")!.body)?.[1];
    expect(surface, "the walkthrough names its surface").toBeDefined();
    const agent = await connect(t.agent, surface!);
    const reviewer = await connect(t.reviewer, "");
    const answers: unknown[] = [];
    const steps: number[] = [];
    try {
      for (const e of walk.filter((x) => !x.sketch && !NOT_TAKEN.has(x.tool))) {
        const step = stepOf(e);
        steps.push(step);
        const r = await callExample(step === 7 ? reviewer : agent, e, answers, bindings(f));
        const answer = r.structuredContent as S;
        expect(answer, `step ${step}, ${where(e)}: ${JSON.stringify(answer?.error ?? r.content)}`).toMatchObject({ ok: true });
        answers.push(answer);
      }
      // Every step from orienting to finishing ran, in order, and the task is done.
      expect(steps).toEqual([...steps].sort((a, b) => a - b));
      expect(new Set(steps)).toEqual(new Set([1, 2, 3, 4, 5, 6, 7, 8]));
      const task = await call(agent, "task_get", { task_id: "WEB-12" });
      expect(task).toMatchObject({ ok: true, task: { status: "done" } });
    } finally {
      await agent.close();
      await reviewer.close();
    }
  });
});
