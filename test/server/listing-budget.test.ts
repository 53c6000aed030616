/**
 * What tools/list costs an agent's context, in tokens (cl100k, a real tokenizer). The lean listing
 * (the default) carries small output schemas only and no size bounds; `schemas=full` carries every
 * schema whole; compact mode lists three tools. The figures are printed for docs/protocol.md's table.
 */
import { describe, expect, it } from "vitest";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { compactSurface } from "../../src/server/compact";
import { selectTools } from "../../src/server/registry";
import { leanSchema, listedTool, SMALL_OUTPUT_SCHEMA_CHARS, toolListing } from "../../src/core/listing";
import { connectClient, seedIdentity } from "../support/helpers";

const tokens = (value: unknown) => encode(JSON.stringify(value)).length;
const ALL = selectTools({ toolsets: ["all"], readonly: false });
const SURFACES = { default: { toolsets: [], readonly: false }, all: { toolsets: ["all"], readonly: false }, readonly: { toolsets: [], readonly: true } };

describe("tools/list size", () => {
  it("lists small output schemas and no size bounds by default, everything with schemas=full, and prints the figures", () => {
    for (const [name, surface] of Object.entries(SURFACES)) {
      const tools = selectTools(surface);
      const lean = tools.map((t) => listedTool(t, "lean"));
      const full = tools.map((t) => listedTool(t, "full"));
      for (const t of lean) {
        if (t.outputSchema) expect(JSON.stringify(t.outputSchema).length, t.name).toBeLessThanOrEqual(SMALL_OUTPUT_SCHEMA_CHARS);
        expect(JSON.stringify(t.inputSchema), t.name).not.toMatch(/"(maxLength|minLength|maxItems|x-max-bytes|x-brief)"|"additionalProperties":false/);
      }
      // Every tool lists its output schema in full, except one that opts out (mcp.echo, on every surface, answers its message).
      expect(full.filter((t) => t.outputSchema === undefined).map((t) => t.name)).toEqual(tools.filter((t) => t.listOutput === false).map((t) => t.name));
      expect(tools.filter((t) => t.listOutput === false).map((t) => t.name)).toEqual(["mcp.echo"]);
      expect(full).toEqual(tools.map(toolListing));
      const compact = compactSurface(surface).tools.map((t) => listedTool(t, "lean"));
      console.info(`tools/list ${name}: ${tools.length} tools, ${tokens(lean)} tokens (lean), ${tokens(full)} (schemas=full); compact ${tokens(compact)}`);
      if (name === "all") {
        const byDefault = new Set(selectTools(SURFACES.default));
        const rows = tools.map((t, i) => ({ t, dflt: byDefault.has(t), lean: tokens(lean[i]), full: tokens(full[i]) }));
        rows.sort((a, b) => Number(b.dflt) - Number(a.dflt) || a.t.toolset.localeCompare(b.t.toolset) || b.lean - a.lean);
        console.info(rows.map((r) => `| ${r.t.toolset}${r.dflt ? " (default)" : ""} | ${r.t.name} | ${r.lean} | ${r.full} |`).join("\n"));
      }
      expect(tokens(lean)).toBeLessThan(tokens(full) / 2);
    }
    expect(tokens(selectTools(SURFACES.default).map((t) => listedTool(t, "lean")))).toBeLessThanOrEqual(10_000);
  });

  it("leaves out only what the server enforces or the listing repeats: every parameter keeps its name, type and description", () => {
    for (const def of selectTools(SURFACES.all)) {
      const full = toolListing(def).inputSchema as { properties: Record<string, Record<string, unknown>>; required?: string[] };
      const lean = listedTool(def, "lean").inputSchema as typeof full;
      expect(Object.keys(lean.properties), def.name).toEqual(Object.keys(full.properties));
      expect(lean.required, def.name).toEqual(full.required);
      for (const [key, p] of Object.entries(full.properties)) {
        expect(lean.properties[key]!.description, `${def.name}.${key}`).toBe(p.description);
        expect(lean.properties[key]!.type, `${def.name}.${key}`).toEqual(p.type);
        expect(lean.properties[key]!.enum, `${def.name}.${key}`).toEqual(p.enum);
      }
    }
  });

  it("drops a nullable branch's repeated description, and lists a schema marked as repeating another tool's by its structure (inputs) or its name (outputs)", () => {
    const nullable = { anyOf: [{ type: "string", maxLength: 9, description: "Owner." }, { type: "null" }], description: "Owner. null clears." };
    expect(leanSchema(nullable)).toEqual({ anyOf: [{ type: "string" }, { type: "null" }], description: "Owner. null clears." });
    const briefed = {
      type: "object",
      "x-brief": true,
      description: "Like task_create.",
      properties: { a: { type: "integer", description: "A.", default: 2, minimum: 0, enum: [1, 2] } },
      required: ["a"],
      additionalProperties: false,
    };
    expect(leanSchema(briefed)).toEqual({ type: "object", description: "Like task_create.", properties: { a: { type: "integer", enum: [1, 2] } }, required: ["a"] });
    expect(leanSchema(briefed, undefined, "output")).toEqual({ type: "object", description: "Like task_create." });
  });

  it("shows nested list items and a plan parameter's whole schema in the default listing", () => {
    const byName = (name: string) => ALL.find((t) => t.name === name)!;
    type Obj = { type?: unknown; enum?: unknown[]; properties: Record<string, Obj>; items: Obj; anyOf: Obj[]; required?: string[]; description?: string };
    // task_create_many's items are task_create's arguments (but project_id), every one with its type.
    const create = listedTool(byName("task_create"), "lean").inputSchema as unknown as Obj;
    const items = (listedTool(byName("task_create_many"), "lean").inputSchema as unknown as Obj).properties.tasks!.items;
    expect(items.description).toContain("task_create");
    expect(items.required).toEqual(["title"]);
    for (const [key, p] of Object.entries(create.properties)) {
      if (["project_id", "idempotency_key", "allow_secrets"].includes(key)) continue;
      expect(items.properties[key]?.type, key).toEqual(p.type);
    }
    expect(items.properties.depends_on!.items.anyOf.map((b) => b.type)).toEqual(["string", "object"]);
    // save_plan's plan: a JSON string, or the plan object with its steps, their files and dependencies.
    for (const tool of ["save_plan", "visualize_plan", "execute_plan", "refine_plan"]) {
      const params = (listedTool(byName(tool), "lean").inputSchema as unknown as Obj).properties;
      const param = params.plan ?? params.current_plan!;
      const [text, doc] = param.anyOf;
      expect(text!.type, tool).toBe("string");
      expect(doc!.type, tool).toBe("object");
      expect(Object.keys(doc!.properties), tool).toEqual(expect.arrayContaining(["goal", "steps", "milestones", "risks", "testing_strategy"]));
      const step = doc!.properties.steps!.items;
      expect(step.required, tool).toEqual(["step_number", "title"]);
      expect(step.properties.depends_on!.description, tool).toBe("Step numbers that must complete before this one.");
      expect(step.properties.files_to_modify!.items.properties.change_type!.enum, tool).toEqual(["create", "modify", "rename", "delete"]);
    }
  });

  it("is chosen per request over HTTP, and a bad value is refused", async () => {
    const id = await seedIdentity(`listing-${crypto.randomUUID().slice(0, 8)}`, "agent");
    const slim = await connectClient(id.key, "/mcp");
    const slimTools = (await slim.client.listTools()).tools;
    expect(slimTools.some((t) => t.outputSchema === undefined)).toBe(true);
    await slim.client.close();
    expect(JSON.stringify(slimTools)).not.toContain("maxLength");
    for (const path of ["/mcp?schemas=full", "/mcp?output_schemas=full"]) {
      const full = await connectClient(id.key, path);
      const fullTools = (await full.client.listTools()).tools;
      expect(
        fullTools.filter((t) => t.outputSchema === undefined).map((t) => t.name),
        path,
      ).toEqual(["mcp.echo"]);
      expect(JSON.stringify(fullTools), path).toContain("maxLength");
      await full.client.close();
    }
    await expect(connectClient(id.key, "/mcp?schemas=huge")).rejects.toThrow(/Unknown schemas/);
  });
});
