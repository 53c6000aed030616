/**
 * The guide topics (src/guide/topics.ts) as skills, through the SDK's Skills extension
 * (SEP-2640, `@modelcontextprotocol/server/ext/skills`): one skill per topic at
 * `skill://agent-ledger/<topic>/SKILL.md`, named by the topic id, and, where the topic names
 * tools, `references/tools.md` with those tools' parameters as tools/list describes them.
 *
 * Only the extension's portable entry is used: `memorySkillFiles` over strings built here, so
 * nothing reads a file system (the `ext/skills/node` entry, which imports node:fs, is not
 * imported). The catalog hashes the files with WebCrypto once per isolate.
 *
 * The extension attaches to a v2 `McpServer` (it registers its skill:// resource template with
 * `McpServer.registerResource`), so the server's other resources must be registered through
 * `registerResource` as well: a hand-set `resources/list` handler on the low-level `Server` makes
 * `attach` throw.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import { memorySkillFiles, type SkillCatalog, SkillsExtension } from "@modelcontextprotocol/server/ext/skills";
import { GUIDE_TOPICS, type GuideTopic, renderTopic } from "../guide/topics";
import type { AnyToolDef } from "../core/define-tool";
import { ALL_TOOLS } from "./registry";
import { listedTool } from "../core/listing";

/** The first segment of every skill URI: skills of this server sit apart from a host's others. */
export const SKILLS_PREFIX = "agent-ledger";

/** The guide changes only with a deploy, and reads the same for every caller. */
const CACHE_HINT = { ttlMs: 60 * 60 * 1000, cacheScope: "public" } as const;

/** The Agent Skills limit on a description. */
const MAX_DESCRIPTION_CHARS = 1024;

/** Registered tools a topic names, in the order it first names them. */
export function toolsNamedIn(topic: GuideTopic): AnyToolDef[] {
  const at = new Map<AnyToolDef, number>();
  for (const def of ALL_TOOLS) {
    // Whole words only: `search` must not match inside `knowledge_search`.
    const m = new RegExp(`(?<![\\w.])${def.name.replace(/\./g, "\\.")}(?![\\w])`).exec(topic.body);
    if (m) at.set(def, m.index);
  }
  return [...at.entries()].sort((a, b) => a[1] - b[1]).map(([def]) => def);
}

/** What the topic covers and its first sentence: hosts show the description to decide when to load a skill. */
function description(topic: GuideTopic): string {
  const flat = topic.body.replace(/\s+/g, " ").trim();
  const first = /^.*?[.!?](?=\s|$)/.exec(flat)?.[0] ?? flat;
  const d = `The agent-ledger MCP server's guide to ${topic.title.toLowerCase()}: ${first}`;
  return d.length <= MAX_DESCRIPTION_CHARS ? d : `${d.slice(0, MAX_DESCRIPTION_CHARS - 1)}…`;
}

interface JsonSchemaProperty {
  type?: string | string[];
  enum?: unknown[];
  description?: string;
  anyOf?: JsonSchemaProperty[];
}

function typeOf(p: JsonSchemaProperty): string {
  if (p.enum) return p.enum.map((e) => JSON.stringify(e)).join(" | ");
  if (p.type) return Array.isArray(p.type) ? p.type.join(" | ") : p.type;
  if (p.anyOf) return p.anyOf.map(typeOf).join(" | ");
  return "any";
}

function renderTool(def: AnyToolDef): string {
  const listed = listedTool(def, "lean");
  const schema = listed.inputSchema as { properties?: Record<string, JsonSchemaProperty>; required?: string[] };
  const required = new Set(schema.required ?? []);
  const params = Object.entries(schema.properties ?? {}).map(([name, p]) => `- \`${name}\` (${typeOf(p)}${required.has(name) ? ", required" : ""}): ${p.description ?? ""}`.trimEnd());
  const kind = def.annotations.readOnly ? "reads" : def.annotations.destructive ? "writes, destructive" : "writes";
  return [`## ${def.name}`, "", `${listed.title ?? def.name} (${kind}, toolset ${def.toolset}). ${listed.description ?? ""}`.trim(), "", ...(params.length ? params : ["No parameters."])].join("\n");
}

/** The files of every guide skill, by path under the catalog root: `<topic>/SKILL.md`, `<topic>/references/tools.md`. */
export function guideSkillFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const topic of GUIDE_TOPICS) {
    const tools = toolsNamedIn(topic);
    const frontmatter = `---\nname: ${topic.id}\ndescription: ${JSON.stringify(description(topic))}\n---\n`;
    const more = tools.length
      ? `\nThe tools this topic names, with their parameters: [references/tools.md](references/tools.md). The whole guide: the guide tool, or the resource ledger://guide.\n`
      : `\nThe whole guide: the guide tool, or the resource ledger://guide.\n`;
    files[`${topic.id}/SKILL.md`] = `${frontmatter}\n${renderTopic(topic)}${more}`;
    if (tools.length) {
      files[`${topic.id}/references/tools.md`] =
        `# Tools named in "${topic.title}"\n\nAs tools/list describes them; a tool outside the default toolsets needs ?toolsets=… (or all) on the /mcp URL.\n\n${tools.map(renderTool).join("\n\n")}\n`;
    }
  }
  return files;
}

let catalog: Promise<SkillCatalog> | undefined;

/**
 * The guide's skill catalog, built once per isolate. `strict`, so a topic that makes an invalid
 * skill fails loudly instead of vanishing from skills/list.
 */
export function guideSkills(): Promise<SkillCatalog> {
  catalog ??= SkillsExtension.load(memorySkillFiles(guideSkillFiles()), { prefix: SKILLS_PREFIX, strict: true, cacheHint: CACHE_HINT }).catch((err: unknown) => {
    catalog = undefined;
    throw err;
  });
  return catalog;
}

/**
 * Serves the guide skills on a v2 McpServer: skills/list, skills/get, resources/directory/read,
 * the skill:// resources, and the `io.modelcontextprotocol/skills` capability. Call it before
 * the server connects (createMcpHandler's factory), after or before its other registerResource calls.
 */
export async function attachGuideSkills(mcp: McpServer): Promise<void> {
  (await guideSkills()).attach(mcp);
}
