/**
 * The bounds every tool inherits from the registry: declared limits on every parameter, and a
 * fuzz walk over every tool in the registry (tools added later included) with oversized,
 * 5,000-deep, wrong-typed and control-character arguments.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ALL_TOOLS, findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { toolListing } from "../../src/core/listing";
import { DOC_OPS } from "../../src/docs/composite/surface";
import { jsonSchema } from "../../src/core/json-schema";
import { CONTROL_TEXT, DEEP, fuzzCases } from "../fuzz/cases";
import { call, makeCtx, ok, seedIdentity, tableRowCounts } from "../support/helpers";

type Schema = Record<string, unknown>;

/** Every place in a JSON Schema that lacks a bound, as "tool: path (what)". */
function unbounded(tool: string, s: Schema, path: string, out: string[]): void {
  if (s.type === "string" && s.maxLength === undefined && !s.enum && s.const === undefined) out.push(`${tool}: ${path} (string without maxLength)`);
  if (s.type === "array" && s.maxItems === undefined) out.push(`${tool}: ${path} (array without maxItems)`);
  const freeForm =
    (s.type === "object" && (!s.properties || (s.additionalProperties !== undefined && s.additionalProperties !== false))) ||
    (s.type === undefined && !s.anyOf && !s.oneOf && !s.allOf && !s.enum && s.const === undefined);
  if (freeForm && (s["x-max-bytes"] === undefined || s["x-max-depth"] === undefined)) out.push(`${tool}: ${path} (free-form JSON without x-max-bytes and x-max-depth)`);
  // Inside a value bounded as a whole (bytes and depth), its parts need no bounds of their own.
  if (s["x-max-bytes"] !== undefined) return;
  for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) unbounded(tool, v, `${path}.${k}`, out);
  if (s.items) unbounded(tool, s.items as Schema, `${path}[]`, out);
  if (s.additionalProperties && typeof s.additionalProperties === "object") unbounded(tool, s.additionalProperties as Schema, `${path}{}`, out);
  for (const k of ["anyOf", "oneOf", "allOf"]) for (const x of (s[k] ?? []) as Schema[]) unbounded(tool, x, path, out);
}

const MAX_ERROR_RESPONSE = 4096;

describe("declared bounds", () => {
  it("every string parameter of every tool has a maxLength, every array a maxItems, every free-form object a byte and depth bound", () => {
    const out: string[] = [];
    for (const def of ALL_TOOLS) unbounded(def.name, toolListing(def).inputSchema as Schema, "", out);
    expect(out).toEqual([]);
  });

  it("so does every document-store op (its params arrive inside a composite tool's free-form step), and every param is described", () => {
    const out: string[] = [];
    for (const op of DOC_OPS) {
      const schema = jsonSchema(op.params, "input");
      unbounded(`${op.category} op ${op.name}`, schema, "", out);
      for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        if (typeof v.description !== "string" || v.description.length < 3) out.push(`${op.name}: ${k} (no description)`);
      }
    }
    expect(out).toEqual([]);
  });
});

describe("fuzz walk over every tool in the registry", () => {
  it("refuses oversized, deep, wrong-typed and control-character arguments with invalid_input naming the field, a small answer and no writes", async () => {
    const id = await seedIdentity(`fuzz-${crypto.randomUUID().slice(0, 8)}`, "fuzzer");
    const ctx = makeCtx(id, undefined, "fuzz-session");
    const before = await tableRowCounts();
    const huge = "a".repeat(1_000_000);
    const failures: string[] = [];
    let cases = 0;
    const kinds = new Set<string>();
    for (const def of ALL_TOOLS) {
      for (const c of [...fuzzCases({ name: def.name, inputSchema: toolListing(def).inputSchema as Schema }, huge)]) {
        cases++;
        kinds.add(c.kind);
        const result = await callTool(def, ctx, c.args);
        const size = JSON.stringify(result).length;
        const error = (result.structuredContent as { error?: { code: string; message: string } }).error;
        const where = `${c.tool} ${c.kind} ${c.field}`;
        if (!result.isError || !error) failures.push(`${where}: accepted`);
        else if (error.code !== "invalid_input") failures.push(`${where}: ${error.code} ${error.message.slice(0, 200)}`);
        else if (!error.message.includes(c.field)) failures.push(`${where}: message does not name the field: ${error.message.slice(0, 200)}`);
        if (size > MAX_ERROR_RESPONSE) failures.push(`${where}: answer of ${size} bytes`);
      }
      // Arguments that are not an object at all.
      for (const bad of ["text", [1, 2], 42, true]) {
        cases++;
        const result = await callTool(def, ctx, bad);
        const error = (result.structuredContent as { error?: { code: string } }).error;
        if (!result.isError || error?.code !== "invalid_input") failures.push(`${def.name} non-object ${JSON.stringify(bad)}: ${error?.code ?? "accepted"}`);
      }
    }
    expect(failures).toEqual([]);
    expect(kinds).toEqual(new Set(["oversized", "deep", "wrong_type", "control"]));
    expect(cases).toBeGreaterThan(ALL_TOOLS.length * 8);
    expect(await tableRowCounts()).toEqual(before);
  }, 300_000);

  it("does the same for every document-store op inside its composite tool", async () => {
    const id = await seedIdentity(`fuzz-ops-${crypto.randomUUID().slice(0, 8)}`, "fuzzer");
    const ctx = makeCtx(id, undefined, "fuzz-ops-session");
    const before = await tableRowCounts();
    const huge = "a".repeat(1_000_000);
    const failures: string[] = [];
    let cases = 0;
    const wrap = (category: string, op: string, params: Record<string, unknown>) =>
      category === "query"
        ? { tool: "docs_query", wrapper: "steps", args: { steps: [{ op, params }] } }
        : category === "execute"
          ? { tool: "docs_execute", wrapper: "operations", args: { operations: [{ op, params }] } }
          : { tool: "docs_session", wrapper: "params", args: { action: op, params } };
    // Ops that need one of several optional params (the seed's "Provide 'query' … or 'hash'") get
    // one, so the case's attack on another field is what the op refuses.
    const anchor: Record<string, Record<string, unknown>> = { search: { query: "x" }, get: { name: "x" }, graph: { name: "x" } };
    for (const op of DOC_OPS) {
      for (const c of fuzzCases({ name: op.name, inputSchema: jsonSchema(op.params, "input") }, huge)) {
        cases++;
        const w = wrap(op.category, op.name, { ...anchor[op.name], ...c.args });
        const result = await callTool(findTool(w.tool)!, ctx, w.args);
        const error = (result.structuredContent as { error?: { code: string; message: string } }).error;
        const where = `${op.name} ${c.kind} ${c.field}`;
        // Caught inside the op, the message names the op's field; caught by the tool's own bounds
        // (the whole step is too deep or too big), it names the tool's parameter that holds it.
        if (!result.isError || !error) failures.push(`${where}: accepted`);
        else if (error.code !== "invalid_input") failures.push(`${where}: ${error.code} ${error.message.slice(0, 200)}`);
        else if (!error.message.includes(c.field) && !error.message.includes(w.wrapper)) failures.push(`${where}: message names neither the field nor ${w.wrapper}: ${error.message.slice(0, 200)}`);
        if (JSON.stringify(result).length > MAX_ERROR_RESPONSE * 2) failures.push(`${where}: answer of ${JSON.stringify(result).length} bytes`);
      }
    }
    expect(failures).toEqual([]);
    expect(cases).toBeGreaterThan(DOC_OPS.length * 4);
    expect(await tableRowCounts()).toEqual(before);
  }, 300_000);
});

describe("control characters", () => {
  it("are refused in identifiers and titles, while bodies keep tabs and line breaks", async () => {
    const id = await seedIdentity(`ctl-${crypto.randomUUID().slice(0, 8)}`, "writer");
    const ctx = makeCtx(id);
    const title = await call(ctx, "project_create", { title: "Line\nbreak" });
    expect(title.error.code).toBe("invalid_input");
    expect(title.error.message).toContain("'title'");
    expect(title.error.message).toContain("U+000A");
    const esc = await call(ctx, "project_create", { title: `Red ${CONTROL_TEXT}` });
    expect(esc.error.message).toContain("U+0007");
    const p = await ok(ctx, "project_create", { title: "Plain title", description: "Line one\n\tindented line two\r\n" });
    expect(p.project.description).toBe("Line one\n\tindented line two\r\n");
    const bodyBell = await call(ctx, "knowledge_write", { title: "Bell", body: "ding\u0007" });
    expect(bodyBell.error.code).toBe("invalid_input");
    expect(bodyBell.error.message).toContain("'body'");
  });

  it("are refused in the keys and values of free-form JSON", async () => {
    const id = await seedIdentity(`ctlj-${crypto.randomUUID().slice(0, 8)}`, "writer");
    const ctx = makeCtx(id);
    const key = await call(ctx, "activity_log", { verb: "deploy.finished", summary: "Deployed", metadata: { "bad\u001bkey": 1 } });
    expect(key.error.code).toBe("invalid_input");
    expect(key.error.message).toContain("metadata key");
    const value = await call(ctx, "activity_log", { verb: "deploy.finished", summary: "Deployed", metadata: { nested: { v: "x\u0000y" } } });
    expect(value.error.message).toContain("U+0000");
  });
});

describe("errors never echo large input", () => {
  it("quotes a short prefix of an oversized change_type and suggests only for short input", async () => {
    const id = await seedIdentity(`echo-${crypto.randomUUID().slice(0, 8)}`, "writer");
    const ctx = makeCtx(id);
    const huge = await call(ctx, "log_change", { entity_path: "users.email", change_type: "m".repeat(1_000_000) });
    expect(huge.error.code).toBe("invalid_input");
    expect(JSON.stringify(huge).length).toBeLessThan(MAX_ERROR_RESPONSE);
    expect(huge.error.message).not.toContain("did you mean");
    const typo = await call(ctx, "log_change", { entity_path: "users.email", change_type: "modfy" });
    expect(typo.error.message).toContain("did you mean 'modify'");
  });

  it("names at most ten of thousands of unknown keys", async () => {
    const id = await seedIdentity(`keys-${crypto.randomUUID().slice(0, 8)}`, "writer");
    const ctx = makeCtx(id);
    const args = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`key_${i}`, i]));
    const r = await call(ctx, "whoami", args);
    expect(r.error.code).toBe("invalid_input");
    expect(r.error.message).toContain("and 49990 more");
    expect(JSON.stringify(r).length).toBeLessThan(MAX_ERROR_RESPONSE);
  });

  it("refuses a 5 MiB free-form extra with invalid_input naming the field, not internal_error", async () => {
    const id = await seedIdentity(`extra-${crypto.randomUUID().slice(0, 8)}`, "writer");
    const ctx = makeCtx(id);
    const big = await call(ctx, "handoff_respond", { handoff_id: "h-1", response: { text: "ok", extra: "x".repeat(1_500_000) } });
    expect(big.error.code).toBe("invalid_input");
    expect(big.error.message).toContain("response");
    const deep = await call(ctx, "handoff_respond", { handoff_id: "h-1", response: { text: "ok", extra: DEEP } });
    expect(deep.error.code).toBe("invalid_input");
    expect(deep.error.message).toContain("'response'");
    const tooBig = await call(ctx, "handoff_respond", { handoff_id: "h-1", response: { text: "ok", extra: "x".repeat(5 * 1024 * 1024) } });
    expect(tooBig.error.code).toBe("invalid_input");
    expect(tooBig.error.message).toContain("larger than 2 MiB");
  });
});

describe("secret-shaped text in writes", () => {
  // Assembled at run time so no token-shaped literal sits in the repository.
  const token = ["ghp", "_", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"].join("");

  it("is masked before it is stored, with a warning naming what and where, and never echoed", async () => {
    const id = await seedIdentity(`mask-${crypto.randomUUID().slice(0, 8)}`, "writer");
    const ctx = makeCtx(id);
    const r = await ok(ctx, "knowledge_write", { title: "Deploy notes", body: `Use token ${token} for the deploy bot.` });
    expect(r.note.body).toBe("Use token [masked: GitHub token] for the deploy bot.");
    expect(r.warnings[0]).toContain("GitHub token in 'body'");
    expect(JSON.stringify(r)).not.toContain(token);
    const stored = await env.DB.prepare(`SELECT body FROM knowledge_notes WHERE id = ?`).bind(r.note.id).first<{ body: string }>();
    expect(stored!.body).not.toContain(token);

    const p = await ok(ctx, "project_create", { title: "Secrets", description: `password = "hunter2hunter2"` });
    expect(p.project.description).toBe(`[masked: secret assignment]"`);
    expect(p.warnings[0]).toContain("secret assignment in 'description'");

    const event = await ok(ctx, "log_change", { entity_path: "ci.deploy", change_type: "modify", reasoning: `Rotated the bot to ${token} because the old one leaked` });
    const blame = await ok(ctx, "blame", { entity_path: "ci.deploy" });
    expect(blame.reasoning).toContain("[masked: GitHub token]");
    expect(event.warnings.join(" ")).toContain("masked");
  });

  it("is kept verbatim with allow_secrets: true, and the tool's own warning still says so", async () => {
    const id = await seedIdentity(`keep-${crypto.randomUUID().slice(0, 8)}`, "writer");
    const ctx = makeCtx(id);
    const r = await ok(ctx, "knowledge_write", { title: "Fixture", body: `Test fixture token ${token}`, allow_secrets: true });
    expect(r.note.body).toContain(token);
    expect(r.warnings.join(" ")).toContain("looks like it contains a secret");
  });

  it("leaves file content alone, refuses it in feedback as before, and is not offered on reads or GitHub writes", async () => {
    const id = await seedIdentity(`verb-${crypto.randomUUID().slice(0, 8)}`, "writer");
    const ctx = makeCtx(id);
    const p = await ok(ctx, "project_create", { title: "Files" });
    const bytes = btoa(`config with ${token}\n`);
    const a = await ok(ctx, "attach_add", { object_type: "project", object_id: p.project.id, kind: "file", storage_path: "cfg/bot.env", content_base64: bytes });
    // Each upload has its own key under the tenant's prefix (see attach_add's versions).
    const listed = await env.BLOBS.list({ prefix: `${id.tenantId}/` });
    const stored = listed.objects.filter((o) => o.key.endsWith("/cfg/bot.env"));
    expect(stored).toHaveLength(1);
    expect(await (await env.BLOBS.get(stored[0]!.key))!.text()).toBe(`config with ${token}\n`);
    expect(a.warnings).toBeUndefined();

    const fb = await call(ctx, "feature_request_create", { title: "Leak", kind: "bug", body: `my token is ${token}` });
    expect(fb.error.code).toBe("secret_in_feedback");

    const props = (name: string) => Object.keys((toolListing(ALL_TOOLS.find((t) => t.name === name)!).inputSchema as { properties: object }).properties);
    expect(props("knowledge_write")).toContain("allow_secrets");
    expect(props("knowledge_search")).not.toContain("allow_secrets");
    expect(props("batch_commit")).not.toContain("allow_secrets");
    expect(props("feature_request_create")).not.toContain("allow_secrets");
  });
});
