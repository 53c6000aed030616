/**
 * Workflow prompts, the joined prompt listing, completion/complete and the guide skills, as the
 * lead's v2 server will call them: plain functions over a Ctx, inside workerd against real D1.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer, ProtocolError } from "@modelcontextprotocol/server";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ingestDocument } from "../../src/docs/store/ingest";
import { GUIDE_TOPICS } from "../../src/guide/topics";
import { complete, MAX_COMPLETION_VALUES, RESOURCE_TEMPLATE_COMPLETIONS } from "../../src/server/completions";
import type { Ctx } from "../../src/core/context";
import { getAnyPrompt, InvalidPromptParams, listAllPrompts, MAX_EMBEDDED_CHARS, WORKFLOW_PROMPTS } from "../../src/server/prompts";
import { attachGuideSkills, guideSkillFiles, guideSkills, SKILLS_PREFIX, toolsNamedIn } from "../../src/server/skills";
import { ALL_TOOL_NAMES } from "../support/tool-names";
import { makeCtx, ok, seedIdentity, type Structured } from "../support/helpers";

const uid = () => crypto.randomUUID().slice(0, 8);

async function tenant(prefix: string): Promise<{ ctx: Ctx; slug: string }> {
  const slug = `${prefix}-${uid()}`;
  return { ctx: makeCtx(await seedIdentity(slug, "agent")), slug };
}

/** The text of every message of a prompts/get result, embedded resources included. */
function allText(result: { messages: Array<{ content: unknown }> }): string {
  return result.messages
    .map((m) => {
      const c = m.content as { type: string; text?: string; resource?: { text?: string } };
      return c.type === "text" ? c.text! : (c.resource?.text ?? "");
    })
    .join("\n");
}

async function refusal(p: Promise<unknown>): Promise<InvalidPromptParams> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(InvalidPromptParams);
  // What the SDK (v1 and v2) puts on the wire: the code, and the message without a prefix.
  expect((err as ProtocolError).code).toBe(-32602);
  expect(err).toBeInstanceOf(ProtocolError);
  return err as InvalidPromptParams;
}

const values = async (ctx: Ctx, ...a: Parameters<typeof complete> extends [Ctx, ...infer R] ? R : never) => (await complete(ctx, ...a)).values;

// Tool calls the prompts write out are `name {json}`; every such name must be a registered tool.
const CALLS = /(?<![\w.])([a-z][a-z0-9_.]*) \{"/g;

describe("workflow prompts", () => {
  let a: Ctx;
  let b: Ctx;
  let taskRef: string;
  let doneRef: string;

  beforeAll(async () => {
    const ta = await tenant("pc-a");
    a = ta.ctx;
    b = (await tenant("pc-b")).ctx;
    await seedIdentity(ta.slug, "reviewer-bot");
    await ok(a, "project_create", { title: "Payments API", key: "PAY", summary: "Card payments" });
    const t = (await ok(a, "task_create", { project_id: "PAY", title: "Retry failed captures", acceptance_criteria: [{ text: "retries are idempotent" }, { text: "backoff capped", met: true }] }))
      .task as Structured;
    taskRef = t.ref as string;
    const d = (await ok(a, "task_create", { project_id: "PAY", title: "Old work" })).task as Structured;
    await ok(a, "task_update", { task_id: d.id, patch: { status: "cancelled" } });
    doneRef = d.ref as string;
    await ok(a, "log_change", { entity_path: "payments.capture", change_type: "add", diff: "+ capture()", reasoning: "captures must be retried on network errors", changeset_id: "pay-retries" });
    await ok(a, "log_change", { entity_path: "payments.capture", change_type: "remove", diff: "- capture()", reasoning: "reverted: double captures under retry", changeset_id: "pay-retries" });
    await ok(b, "project_create", { title: "Other tenant's payments", key: "PAYB" });
  });

  it("lists the three workflow prompts first, with titles and arguments, then the document store's", async () => {
    const prompts = await listAllPrompts(a);
    expect(prompts.slice(0, 3).map((p) => p.name)).toEqual(["start_session", "prepare_handoff", "review_change"]);
    expect(prompts[0]).toMatchObject({ title: "Start a session on a project", arguments: [{ name: "project", required: true }] });
    expect(prompts[1]!.arguments).toEqual([expect.objectContaining({ name: "task", required: true }), expect.objectContaining({ name: "to_actor", required: true })]);
    expect(prompts[2]!.arguments).toEqual([expect.objectContaining({ name: "entity_path", required: true }), expect.objectContaining({ name: "changeset_id", required: false })]);
    expect(prompts.slice(3).map((p) => p.name)).toEqual(["search_codebase", "summarize_document", "research_docs"]);
    for (const p of prompts) expect(p.description).toBeTruthy();
  });

  it("start_session names the tools of the loop and embeds the project's brief as the caller sees it", async () => {
    const r = await getAnyPrompt(a, "start_session", { project: "pay" });
    const [instructions, brief] = r.messages;
    const text = (instructions!.content as { text: string }).text;
    expect(text).toContain('Start a working session on project PAY ("Payments API", status active; open tasks: 1 todo (1 ready, 0 blocked)).');
    for (const tool of [
      "whoami",
      "project_brief",
      "inbox",
      "task_query",
      "task_claim",
      "knowledge_search",
      "decision_query",
      "prior_attempts",
      "blame",
      "log_change",
      "task_code_ref",
      "task_update",
    ]) {
      expect(text).toContain(tool);
    }
    expect(text).toContain('task_query {"project_id":"PAY","state":"ready"}');
    const resource = brief!.content as { type: string; resource: { uri: string; mimeType: string; text: string } };
    expect(resource.type).toBe("resource");
    expect(resource.resource.uri).toBe("ledger://project/PAY/brief");
    const embedded = JSON.parse(resource.resource.text) as Structured;
    expect(embedded.project.key).toBe("PAY");
    expect(embedded.top_open_tasks.map((t: Structured) => t.ref)).toEqual([taskRef]);
    // The same answer project_brief gives (without the envelope's ok).
    const { ok: _ok, isError: _isError, ...direct } = await ok(a, "project_brief", { project: "PAY" });
    expect(embedded).toEqual(direct);
  });

  it("prepare_handoff states the task, its unmet criteria and the handoff to send", async () => {
    const r = await getAnyPrompt(a, "prepare_handoff", { task: taskRef.toLowerCase(), to_actor: "reviewer-bot" });
    const text = allText(r);
    expect(text).toContain(`Prepare a handoff of task ${taskRef} "Retry failed captures" to reviewer-bot.`);
    expect(text).toContain("The task is todo, unassigned.");
    expect(text).toContain("Acceptance criteria not yet met:\n- retries are idempotent");
    expect(text).not.toContain("- backoff capped");
    expect(text).toContain(`handoff_create {"to_actor_ids":["reviewer-bot"],"kind":"handoff","title":"Take over ${taskRef}: Retry failed captures","related_task_id":"${taskRef}","body":"…"}`);
    expect(text).toContain(`task_assign {"task_id":"${taskRef}","actor_id":"reviewer-bot"}`);
    const closed = allText(await getAnyPrompt(a, "prepare_handoff", { task: doneRef, to_actor: "reviewer-bot" }));
    expect(closed).toContain("The task is cancelled");
    expect(closed).toContain("It is closed");
  });

  it("review_change embeds blame, the prior attempts and the changeset", async () => {
    const r = await getAnyPrompt(a, "review_change", { entity_path: "./payments.capture", changeset_id: "pay-retries" });
    expect(r.messages).toHaveLength(4);
    const [instructions, latest, attempts, feature] = r.messages.map((m) => (m.content as { text: string }).text);
    expect(instructions).toContain('Review the change to "payments.capture" before you log it.');
    expect(instructions).toContain("prior_attempts found 1 earlier attempt(s)");
    expect(instructions).toContain('log_change {"entity_path":"payments.capture","change_type":"…","diff":"…","reasoning":"…","changeset_id":"pay-retries"}');
    expect(latest).toContain('"change_type": "remove"');
    expect(latest).toContain("reverted: double captures under retry");
    expect(attempts).toMatch(/"items": \[\n/);
    expect(attempts).toContain('"payments.capture"');
    expect(feature).toContain("Changeset pay-retries (changeset):");
    expect(feature).toContain('"captures must be retried on network errors"');

    const fresh = await getAnyPrompt(a, "review_change", { entity_path: "payments.refund", changeset_id: "refunds" });
    expect(fresh.messages).toHaveLength(1);
    const only = allText(fresh);
    expect(only).toContain('nothing is logged for "payments.refund" yet');
    expect(only).toContain("prior_attempts found no earlier attempt that was undone.");
    expect(only).toContain('changeset "refunds" has no logged change yet');
    expect(only).toContain('log_change {"entity_path":"payments.refund","change_type":"…","diff":"…","reasoning":"…","changeset_id":"refunds"}.');
    const bare = allText(await getAnyPrompt(a, "review_change", { entity_path: "payments.capture" }));
    expect(bare).toContain('log_change {"entity_path":"payments.capture","change_type":"…","diff":"…","reasoning":"…"}.');
    expect(bare).not.toContain("Changeset");
  });

  it("bounds an embedded answer and names the call that gives it whole", async () => {
    await ok(a, "log_change", { entity_path: "payments.ledger", change_type: "modify", diff: "+".repeat(40_000), reasoning: "a very large diff" });
    const latest = (await getAnyPrompt(a, "review_change", { entity_path: "payments.ledger" })).messages[1]!.content as { text: string };
    expect(latest.text.length).toBeLessThan(MAX_EMBEDDED_CHARS + 200);
    expect(latest.text).toContain(`…[cut at ${MAX_EMBEDDED_CHARS} characters; blame {"entity_path":"payments.ledger"} returns it whole]`);
  });

  it("writes out only tools the server registers", async () => {
    const texts = [
      allText(await getAnyPrompt(a, "start_session", { project: "PAY" })),
      allText(await getAnyPrompt(a, "prepare_handoff", { task: taskRef, to_actor: "reviewer-bot" })),
      allText(await getAnyPrompt(a, "review_change", { entity_path: "payments.capture", changeset_id: "pay-retries" })),
    ];
    const called = new Set(texts.flatMap((t) => [...t.matchAll(CALLS)].map((m) => m[1]!)));
    expect(called.size).toBeGreaterThan(10);
    for (const name of called) expect(ALL_TOOL_NAMES, name).toContain(name);
  });

  it("refuses missing, blank, unknown and over-long arguments with -32602", async () => {
    expect((await refusal(getAnyPrompt(a, "start_session", {}))).message).toBe("Prompt 'start_session' needs the argument 'project': The project's key (e.g. API).");
    await refusal(getAnyPrompt(a, "start_session", { project: "  " }));
    await refusal(getAnyPrompt(a, "prepare_handoff", { task: taskRef }));
    expect((await refusal(getAnyPrompt(a, "review_change", { entity_path: "x", path: "y" }))).message).toBe("Prompt 'review_change' has no argument 'path'; it takes entity_path, changeset_id.");
    expect((await refusal(getAnyPrompt(a, "start_session", { project: "P".repeat(1001) }))).message).toContain("is 1001 characters; the limit is 1000");
  });

  it("refuses a project, task or actor outside the caller's tenant as unknown", async () => {
    expect((await refusal(getAnyPrompt(a, "start_session", { project: "PAYB" }))).message).toMatch(/^Unknown project: project 'PAYB' not found/);
    await refusal(getAnyPrompt(b, "start_session", { project: "PAY" }));
    await refusal(getAnyPrompt(b, "prepare_handoff", { task: taskRef, to_actor: "agent" }));
    expect((await refusal(getAnyPrompt(a, "prepare_handoff", { task: taskRef, to_actor: "nobody" }))).message).toMatch(/^Unknown actor 'nobody'/);
    expect((await refusal(getAnyPrompt(a, "prepare_handoff", { task: taskRef, to_actor: "me" }))).message).toMatch(/^to_actor is you/);
  });

  it("answers an unknown prompt with -32602 'Unknown prompt'", async () => {
    expect((await refusal(getAnyPrompt(a, "no_such_prompt"))).message).toMatch(/^Unknown prompt 'no_such_prompt'/);
  });
});

describe("document store prompts joined", () => {
  const put = (ctx: Ctx, path: string, body: string) => ingestDocument(ctx, { path, bytes: new TextEncoder().encode(body), mimeType: "text/markdown" });

  it("lists and serves PROMPT-*.md documents; a workflow prompt's name wins over a document's", async () => {
    const { ctx } = await tenant("pc-docs");
    await put(ctx, "PROMPT-release-notes.md", "# Write release notes\n\nCollect the merged PRs.");
    await put(ctx, "PROMPT-start-session.md", "# Our own session start\n\nIgnored: the workflow prompt wins.");
    const prompts = await listAllPrompts(ctx);
    expect(prompts.map((p) => p.name)).toEqual(["start_session", "prepare_handoff", "review_change", "search_codebase", "summarize_document", "research_docs", "release_notes"]);
    expect(prompts.filter((p) => p.name === "start_session")).toHaveLength(1);
    expect(prompts.find((p) => p.name === "start_session")!.title).toBe("Start a session on a project");
    const doc = await getAnyPrompt(ctx, "release_notes");
    expect(doc.messages[0]!.content).toEqual({ type: "text", text: "# Write release notes\n\nCollect the merged PRs." });
    // The document is not reachable under the workflow prompt's name: the workflow prompt answers.
    await ok(ctx, "project_create", { title: "Docs", key: "DOC" });
    expect(allText(await getAnyPrompt(ctx, "start_session", { project: "DOC" }))).toContain("Start a working session on project DOC");
    // A document store refusal leaves as the same -32602 class, without the v1 SDK's prefix.
    expect((await refusal(getAnyPrompt(ctx, "release_notes", { x: "1" }))).message).toMatch(/^Prompt 'release_notes' comes from PROMPT-release-notes\.md and takes no arguments/);
    expect((await refusal(getAnyPrompt(ctx, "search_codebase", {}))).message).toMatch(/^Prompt 'search_codebase' needs the argument 'pattern'/);
  });

  it("does not list another tenant's prompt documents", async () => {
    const { ctx: one } = await tenant("pc-docs1");
    const { ctx: two } = await tenant("pc-docs2");
    await put(one, "PROMPT-private-playbook.md", "# Private");
    expect((await listAllPrompts(two)).map((p) => p.name)).not.toContain("private_playbook");
    await refusal(getAnyPrompt(two, "private_playbook"));
  });
});

describe("completion/complete", () => {
  let a: Ctx;
  let b: Ctx;
  const prompt = (name: string) => ({ type: "ref/prompt" as const, name });
  const resource = (uri: string) => ({ type: "ref/resource" as const, uri });

  beforeAll(async () => {
    const ta = await tenant("cmp-a");
    a = ta.ctx;
    b = (await tenant("cmp-b")).ctx;
    await seedIdentity(ta.slug, "alice");
    await seedIdentity(ta.slug, "alfred");
    for (const key of ["API", "APP", "WEB"]) await ok(a, "project_create", { title: `Project ${key}`, key });
    await ok(b, "project_create", { title: "B's API", key: "APX" });
    for (let i = 0; i < 12; i++) await ok(a, "task_create", { project_id: "API", title: `task ${i}` });
    const closed = (await ok(a, "task_create", { project_id: "APP", title: "closed" })).task as Structured;
    await ok(a, "task_update", { task_id: closed.id, patch: { status: "done" } });
    await ok(a, "task_create", { project_id: "APP", title: "open" });
    await ok(b, "task_create", { project_id: "APX", title: "b's task" });
    await ok(a, "log_change", { entity_path: "users.email", change_type: "add", reasoning: "login by email", changeset_id: "email-login" });
    await ok(a, "log_change", { entity_path: "Users.name", change_type: "add", reasoning: "display names", changeset_id: "profiles" });
    await ok(a, "log_change", { entity_path: "src/auth.py::login", change_type: "modify", reasoning: "rate limit", changeset_id: "auth-hardening" });
    await ok(b, "log_change", { entity_path: "users.secret_b", change_type: "add", reasoning: "b only", changeset_id: "b-changes" });
    await ok(a, "repo_register", { slug: "acme/api" });
    await ok(a, "repo_register", { slug: "acme/app" });
    await ok(a, "repo_register", { slug: "Acme-Labs/web" });
    await ok(b, "repo_register", { slug: "acme/b-secret" });
    await ok(b, "repo_register", { slug: "bcorp/ledger" });
  });

  it("completes project keys for start_session and the brief template, case-insensitively, per tenant", async () => {
    expect(await complete(a, prompt("start_session"), "project", "ap")).toEqual({ values: ["API", "APP"], total: 2, hasMore: false });
    expect(await values(a, resource("ledger://project/{key}/brief"), "key", "")).toEqual(["API", "APP", "WEB"]);
    expect(await values(b, prompt("start_session"), "project", "AP")).toEqual(["APX"]);
    expect(await values(a, prompt("start_session"), "project", "zz")).toEqual([]);
  });

  it("completes open task references: a key being typed, or a number after the dash", async () => {
    const all = await values(a, prompt("prepare_handoff"), "task", "ap");
    expect(all).toEqual([...Array.from({ length: 12 }, (_, i) => `API-${i + 1}`), "APP-2"]);
    expect(await values(a, prompt("prepare_handoff"), "task", "api-1")).toEqual(["API-1", "API-10", "API-11", "API-12"]);
    expect(await values(a, prompt("prepare_handoff"), "task", "APP-")).toEqual(["APP-2"]);
    expect(await values(a, prompt("prepare_handoff"), "task", "x y")).toEqual([]);
    expect(await values(b, prompt("prepare_handoff"), "task", "")).toEqual(["APX-1"]);
  });

  it("completes actor names", async () => {
    expect(await values(a, prompt("prepare_handoff"), "to_actor", "AL")).toEqual(["alfred", "alice"]);
    expect(await values(b, prompt("prepare_handoff"), "to_actor", "al")).toEqual([]);
  });

  it("completes entity paths and changesets from the change ledger; changesets narrow to a chosen entity", async () => {
    expect(await values(a, prompt("review_change"), "entity_path", "users")).toEqual(["users.email", "Users.name"]);
    expect(await values(a, prompt("review_change"), "entity_path", "src/")).toEqual(["src/auth.py::login"]);
    expect(await values(b, prompt("review_change"), "entity_path", "u")).toEqual(["users.secret_b"]);
    expect(await values(a, prompt("review_change"), "changeset_id", "")).toEqual(["auth-hardening", "email-login", "profiles"]);
    expect(await values(a, prompt("review_change"), "changeset_id", "", { arguments: { entity_path: "users.email" } })).toEqual(["email-login"]);
  });

  it("completes guide topics", async () => {
    expect(await values(a, resource("ledger://guide/{topic}"), "topic", "G")).toEqual(["getting-started", "git-and-repos", "glossary"]);
    expect(await values(a, resource("ledger://guide/{topic}"), "topic", "Ge")).toEqual(["getting-started"]);
    expect(await values(a, resource("ledger://guide/{topic}"), "topic", "")).toEqual(GUIDE_TOPICS.map((t) => t.id));
  });

  it("completes repository owners, and names under the owner already filled in", async () => {
    const presets = resource("ledger://repos/{owner}/{name}/presets");
    expect(await values(a, presets, "owner", "ac")).toEqual(["acme", "Acme-Labs"]);
    expect(await values(a, presets, "owner", "")).toEqual(["acme", "Acme-Labs"]);
    expect(await values(b, presets, "owner", "")).toEqual(["acme", "bcorp"]);
    expect(await values(a, presets, "name", "", { arguments: { owner: "ACME" } })).toEqual(["api", "app"]);
    expect(await values(a, presets, "name", "")).toEqual(["api", "app", "web"]);
    expect(await values(b, presets, "name", "", { arguments: { owner: "acme" } })).toEqual(["b-secret"]);
    expect(await values(a, presets, "name", "b", { arguments: { owner: "acme" } })).toEqual([]);
  });

  it("completes the document store's summarize_document name, and offers nothing for free-text arguments", async () => {
    await ingestDocument(a, { path: "notes/design.md", bytes: new TextEncoder().encode("# Design"), mimeType: "text/markdown" });
    expect(await values(a, prompt("summarize_document"), "name", "NOTES/")).toEqual(["notes/design.md"]);
    expect(await values(b, prompt("summarize_document"), "name", "notes/")).toEqual([]);
    expect(await complete(a, prompt("research_docs"), "topic", "any")).toEqual({ values: [], total: 0, hasMore: false });
  });

  it("caps values at 100 and says there are more", async () => {
    const { ctx } = await tenant("cmp-many");
    await ok(ctx, "project_create", { title: "Big", key: "BIG" });
    await ok(ctx, "task_create_many", { project_id: "BIG", tasks: Array.from({ length: 60 }, (_, i) => ({ title: `t${i}` })) });
    await ok(ctx, "task_create_many", { project_id: "BIG", tasks: Array.from({ length: 60 }, (_, i) => ({ title: `u${i}` })) });
    const r = await complete(ctx, prompt("prepare_handoff"), "task", "BIG-");
    expect(r.values).toHaveLength(MAX_COMPLETION_VALUES);
    expect(r.hasMore).toBe(true);
    expect(r.total).toBeUndefined();
    expect(r.values[0]).toBe("BIG-1");
  });

  it("takes long prefixes (D1 refuses LIKE patterns over 50 bytes)", async () => {
    const long = `deeply.nested.${"segment.".repeat(20)}leaf`;
    await ok(a, "log_change", { entity_path: long, change_type: "add", reasoning: "a long path" });
    expect(await values(a, prompt("review_change"), "entity_path", long.slice(0, 150).toUpperCase())).toEqual([long]);
  });

  it("refuses bad input with -32602: over-long value, unknown argument, template or variable; an unknown prompt completes to nothing", async () => {
    expect((await refusal(complete(a, prompt("start_session"), "project", "x".repeat(1001)))).message).toBe("argument.value is 1001 characters; completion takes at most 1000.");
    // An unknown prompt is not refused: it has nothing to offer.
    expect(await complete(a, prompt("test_prompt_with_arguments"), "arg1", "test")).toEqual({ values: [], total: 0, hasMore: false });
    expect((await refusal(complete(a, prompt("start_session"), "key", ""))).message).toBe("Prompt 'start_session' has no argument 'key'; it takes project.");
    expect((await refusal(complete(a, resource("ledger://project/API/brief"), "key", ""))).message).toMatch(/^Unknown resource template 'ledger:\/\/project\/API\/brief'/);
    expect((await refusal(complete(a, resource("ledger://guide/{topic}"), "name", ""))).message).toBe("Resource template 'ledger://guide/{topic}' has no variable 'name'; it has topic.");
    await refusal(complete(a, { type: "ref/other", name: "x" } as never, "x", ""));
  });

  it("refuses a document prompt's arguments: it takes none", async () => {
    const { ctx } = await tenant("cmp-docs");
    await ingestDocument(ctx, { path: "PROMPT-triage.md", bytes: new TextEncoder().encode("# Triage"), mimeType: "text/markdown" });
    expect((await refusal(complete(ctx, prompt("triage"), "x", ""))).message).toBe("Prompt 'triage' takes no arguments.");
    // Another tenant's document prompt is simply unknown here: nothing to offer, nothing revealed.
    expect((await complete(a, prompt("triage"), "x", "")).values).toEqual([]);
  });

  it("covers every resource template variable and every workflow argument with a source", () => {
    expect(Object.keys(RESOURCE_TEMPLATE_COMPLETIONS)).toEqual(["ledger://guide/{topic}", "ledger://project/{key}/brief", "ledger://repos/{owner}/{name}/presets"]);
    for (const p of WORKFLOW_PROMPTS) for (const arg of p.arguments) expect(arg.completion, `${p.name}.${arg.name}`).toBeDefined();
  });
});

describe("guide skills (SEP-2640)", () => {
  const SkillEntry = z.object({
    uri: z.string(),
    frontmatter: z.object({ name: z.string(), description: z.string() }).loose(),
    resources: z.array(z.object({ uri: z.string(), digest: z.string(), size: z.number() })),
  });
  const ListSkills = z.object({ skills: z.array(SkillEntry), nextCursor: z.string().optional() }).loose();
  const GetSkill = z.object({ skill: SkillEntry }).loose();
  const Directory = z.object({ resources: z.array(z.object({ uri: z.string(), mimeType: z.string().optional() }).loose()) }).loose();

  /** A v2 McpServer with a resource of its own, the guide skills attached, and a v1 client on the other end. */
  async function connected(): Promise<Client> {
    const mcp = new McpServer({ name: "agent-ledger-test", version: "0.0.0" });
    mcp.registerResource("guide", "ledger://guide", { mimeType: "text/markdown" }, async (uri) => ({ contents: [{ uri: uri.href, text: "guide" }] }));
    await attachGuideSkills(mcp);
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide as never);
    const client = new Client({ name: "vitest", version: "1.0.0" });
    await client.connect(clientSide);
    return client;
  }

  it("makes one skill per guide topic, named by the topic, with references/tools.md for the tools it names", () => {
    const files = guideSkillFiles();
    for (const t of GUIDE_TOPICS) {
      const md = files[`${t.id}/SKILL.md`]!;
      expect(md.startsWith(`---\nname: ${t.id}\ndescription: "The agent-ledger MCP server's guide to ${t.title.toLowerCase()}: `)).toBe(true);
      expect(md).toContain(t.body);
    }
    expect(files["tasks-and-deps/SKILL.md"]).toContain('description: "The agent-ledger MCP server\'s guide to tasks and dependencies: Statuses: todo, in_progress, in_review, done, cancelled."');
    expect(toolsNamedIn(GUIDE_TOPICS.find((t) => t.id === "decisions")!).map((d) => d.name)).toEqual(["decision_log", "decision_set_status", "decision_query"]);
    // Whole words: the knowledge topic names knowledge_search and search, each once.
    const knowledge = toolsNamedIn(GUIDE_TOPICS.find((t) => t.id === "knowledge")!).map((d) => d.name);
    expect(knowledge).toEqual(["knowledge_search", "knowledge_write", "knowledge_update", "search"]);
    const tools = files["decisions/references/tools.md"]!;
    expect(tools).toContain("## decision_log\n\nLog a decision (writes, toolset decisions).");
    expect(tools).toContain("- `title` (string, required): What was decided about.");
    expect(tools).toContain('- `status` ("proposed" | "accepted" | "rejected"): Status.');
    expect(toolsNamedIn(GUIDE_TOPICS.find((t) => t.id === "entities")!)).toEqual([]);
    expect(files["entities/references/tools.md"]).toBeUndefined();
    expect(files["entities/SKILL.md"]).not.toContain("references/tools.md");
  });

  it("serves skills/list, skills/get, SKILL.md and the directory read on a v2 McpServer, in workerd", async () => {
    const client = await connected();
    expect(client.getServerCapabilities()).toMatchObject({ resources: {}, extensions: { "io.modelcontextprotocol/skills": { directoryRead: true } } });
    const list = await client.request({ method: "skills/list", params: {} }, ListSkills);
    expect(list.skills.map((s) => s.frontmatter.name).sort()).toEqual(GUIDE_TOPICS.map((t) => t.id).sort());
    const decisions = list.skills.find((s) => s.frontmatter.name === "decisions")!;
    expect(decisions.uri).toBe(`skill://${SKILLS_PREFIX}/decisions/SKILL.md`);
    expect(decisions.resources.map((r) => r.uri).sort()).toEqual([`skill://${SKILLS_PREFIX}/decisions/SKILL.md`, `skill://${SKILLS_PREFIX}/decisions/references/tools.md`]);
    for (const r of decisions.resources) expect(r.digest).toMatch(/^sha256:[0-9a-f]{64}$/);

    const got = await client.request({ method: "skills/get", params: { uri: decisions.uri } }, GetSkill);
    expect(got.skill).toEqual(decisions);
    const read = await client.readResource({ uri: decisions.uri });
    const content = read.contents[0] as { text: string; mimeType?: string };
    expect(content.text).toBe(guideSkillFiles()["decisions/SKILL.md"]);
    expect(content.mimeType).toBe("text/markdown");
    const skillMd = decisions.resources.find((r) => r.uri === decisions.uri)!;
    expect(skillMd.size).toBe(new TextEncoder().encode(content.text).byteLength);

    const dir = await client.request({ method: "resources/directory/read", params: { uri: `skill://${SKILLS_PREFIX}/decisions` } }, Directory);
    expect(dir.resources).toEqual(expect.arrayContaining([expect.objectContaining({ uri: `skill://${SKILLS_PREFIX}/decisions/references`, mimeType: "inode/directory" })]));

    // The server's own resources stay listed beside the skills' SKILL.md files.
    const listed = (await client.listResources()).resources.map((r) => r.uri);
    expect(listed).toContain("ledger://guide");
    expect(listed).toContain(`skill://${SKILLS_PREFIX}/getting-started/SKILL.md`);
    await client.close();
  });

  it("answers skills/get for a skill it does not serve with -32602", async () => {
    const client = await connected();
    const err = await client.request({ method: "skills/get", params: { uri: "skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md" } }, GetSkill).then(
      () => null,
      (e: unknown) => e as { code: number },
    );
    expect(err?.code).toBe(-32602);
    await client.close();
  });

  it("builds the catalog once per isolate", async () => {
    expect(await guideSkills()).toBe(await guideSkills());
    expect((await guideSkills()).entries).toHaveLength(GUIDE_TOPICS.length);
  });
});
