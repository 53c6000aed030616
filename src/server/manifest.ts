/**
 * tool_manifest (seed 004, which calls it the source of truth when its own document drifts): the
 * seed-004 tools of the caller's surface, read from the registry's listings at call time, so it
 * can never disagree with tools/list. The registry hands in what it reads (it imports this file).
 */
import type { Tool } from "@modelcontextprotocol/server";
import { z } from "zod";
import { completionModel } from "../llm";
import type { AnyToolDef, ToolsetId, ToolsetMeta } from "../core/define-tool";
import { defineTool, READ_ONLY } from "../core/define-tool";
import type { Surface } from "../core/context";

/** The toolsets seed 004 (code context, review, planning) is served by. */
export const SEED_004_TOOLSETS: readonly ToolsetId[] = ["code", "review", "plans"];
/** The version of seed 004's API reference these tools follow. */
export const SEED_004_VERSION = "1.9.0";

export interface ManifestSource {
  toolsets: readonly ToolsetMeta[];
  select(surface: Surface): readonly AnyToolDef[];
  /** A tool's listing as tools/list gives it by default. */
  listing(def: AnyToolDef): Tool;
}

/** A surface as wide as the registry, for a caller that came in without one (not over /mcp). */
const EVERYTHING: Surface = { toolsets: ["all"], readonly: false };

const parameterSchema = z.object({
  name: z.string().describe("The parameter."),
  type: z.string().describe('Its JSON type ("string", "object", "string | object", …).'),
  required: z.boolean().describe("Whether a call must pass it."),
  description: z.string().describe("What it is, as the tool lists it."),
  enum: z.array(z.unknown()).optional().describe("Its allowed values, where it has a fixed set."),
  default: z.unknown().optional().describe("Its default, where it has one."),
});

const toolSchema = z.object({
  name: z.string().describe("The tool's name."),
  title: z.string().describe("Its title."),
  toolset: z.string().describe("The toolset it is in."),
  description: z.string().describe("Its description, as tools/list gives it."),
  read_only: z.boolean().describe("It changes nothing."),
  parameters: z.array(parameterSchema).describe("Its top-level parameters (the tool's inputSchema in tools/list has every nested one)."),
});

type Json = Record<string, unknown>;

function typeOf(p: Json): string {
  if (typeof p.type === "string") return p.type;
  if (Array.isArray(p.type)) return p.type.join(" | ");
  const branches = (p.anyOf ?? p.oneOf) as Json[] | undefined;
  if (branches) return [...new Set(branches.map(typeOf))].join(" | ");
  return p.enum ? "enum" : "any";
}

export function parametersOf(listing: Tool): z.infer<typeof parameterSchema>[] {
  const schema = listing.inputSchema as { properties?: Record<string, Json>; required?: string[] };
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, p]) => ({
    name,
    type: typeOf(p),
    required: required.has(name),
    description: typeof p.description === "string" ? p.description : "",
    ...(Array.isArray(p.enum) ? { enum: p.enum } : {}),
    ...("default" in p ? { default: p.default } : {}),
  }));
}

export function manifestTool(source: ManifestSource): AnyToolDef {
  return defineTool({
    name: "tool_manifest",
    title: "Tool manifest (seed 004)",
    toolset: "code",
    description:
      "The code-context, review and planning tools (seed 004) this connection can call, generated from the server's registry: each tool's name, description and parameters as tools/list gives them, the toolsets they come from, and how to add the ones this connection lacks.",
    input: z.object({}),
    output: z.object({
      version: z.string().describe("The version of seed 004's API these tools follow."),
      capabilities: z.array(z.string()).describe("The seed-004 toolsets on this connection (code, review, plans)."),
      tools: z.array(z.string()).describe("The names of the seed-004 tools on this connection."),
      tool_details: z.array(toolSchema).describe("Each of those tools, as the registry lists it."),
      discoverability: z
        .object({
          source: z.string().describe("Where the manifest comes from."),
          missing_toolsets: z
            .array(z.object({ toolset: z.string().describe("A seed-004 toolset not on this connection."), description: z.string().describe("What it holds.") }))
            .describe("Seed-004 toolsets this connection did not ask for (add them with ?toolsets=…)."),
          readonly: z.boolean().describe("This connection lists read-only tools only."),
        })
        .describe("How to find more."),
      features: z
        .object({
          language_model: z.boolean().describe("A language model is configured: create_plan, refine_plan, review_changes and the other LLM paths work."),
        })
        .describe("What this server is set up for."),
    }),
    annotations: READ_ONLY,
    run: async (ctx) => {
      const surface = ctx.surface ?? EVERYTHING;
      const tools = source.select(surface).filter((t) => SEED_004_TOOLSETS.includes(t.toolset));
      const present = new Set(tools.map((t) => t.toolset));
      const asked = new Set(source.select({ toolsets: surface.toolsets, readonly: false }).map((t) => t.toolset));
      return {
        version: SEED_004_VERSION,
        capabilities: SEED_004_TOOLSETS.filter((id) => present.has(id)),
        tools: tools.map((t) => t.name),
        tool_details: tools.map((t) => {
          const listing = source.listing(t);
          return { name: t.name, title: t.title, toolset: t.toolset, description: listing.description ?? "", read_only: t.annotations.readOnly, parameters: parametersOf(listing) };
        }),
        discoverability: {
          source: "tools/list of this connection (the registry); call tools/list for each tool's whole inputSchema",
          missing_toolsets: source.toolsets.filter((m) => SEED_004_TOOLSETS.includes(m.id) && !asked.has(m.id)).map((m) => ({ toolset: m.id, description: m.description })),
          readonly: surface.readonly,
        },
        features: { language_model: completionModel(ctx.env) !== null },
      };
    },
    summarize: (r) =>
      `${r.tools.length} seed-004 tool(s) on this connection (${r.capabilities.join(", ") || "none"})${r.discoverability.missing_toolsets.length ? `; not asked for: ${r.discoverability.missing_toolsets.map((m) => m.toolset).join(", ")}` : ""}.`,
  }) as AnyToolDef;
}
