/**
 * Skills through the SDK's Skills extension (SEP-2640, `@modelcontextprotocol/server/ext/skills`):
 * - the guide topics (src/guide/topics.ts): one skill per topic at
 *   `skill://agent-ledger/<topic>/SKILL.md`, named by the topic id, and, where the topic names tools,
 *   `references/tools.md` with those tools' parameters as tools/list describes them;
 * - the team's playbooks (the skills toolset's active tenant-wide skills) at
 *   `skill://agent-ledger/team/<slug>/SKILL.md`, read from D1 only when a skills method asks.
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
import type { McpServer, Resource } from "@modelcontextprotocol/server";
import { DIRECTORY_MIME_TYPE, memorySkillFiles, type Skill, type SkillCatalog, skillEntry, type SkillSource, SkillsExtension } from "@modelcontextprotocol/server/ext/skills";
import type { Ctx } from "../core/context";
import { currentSkill, listSkills, type SkillRow } from "../work/skills/model";
import { GUIDE_TOPICS, type GuideTopic, renderTopic } from "../guide/topics";
import type { AnyToolDef } from "../core/define-tool";
import { ALL_TOOLS } from "./registry";
import { listedTool } from "../core/listing";

/** The first segment of every skill URI: skills of this server sit apart from a host's others. */
export const SKILLS_PREFIX = "agent-ledger";

/** The guide changes only with a deploy, and reads the same for every caller. */
const CACHE_HINT = { ttlMs: 60 * 60 * 1000, cacheScope: "public" } as const;

/** With the team's playbooks beside the guide, answers are the tenant's and change when a skill does. */
const TEAM_CACHE_HINT = { ttlMs: 60 * 1000, cacheScope: "private" } as const;

const BASE = `skill://${SKILLS_PREFIX}/`;
const TEAM = "team";
/** Team skills served in skills/list (the newest first past it are left to skill_list). */
const MAX_TEAM_SKILLS = 500;
const MARKDOWN = "text/markdown";

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

/** The guide skills and the caller's team's, on a server built for one request. */
export async function attachSkills(mcp: McpServer, ctx: Ctx): Promise<void> {
  const source = new LedgerSkills(await guideSkills(), guideSkillFiles(), ctx);
  new SkillsExtension({ source, baseUri: BASE, cacheHint: TEAM_CACHE_HINT }).attach(mcp);
}

/** A team skill's one file: its name and description as frontmatter, then the playbook. */
export function teamSkillFile(row: Pick<SkillRow, "slug" | "name" | "description" | "body">): string {
  return `---\nname: ${row.slug}\ndescription: ${JSON.stringify(row.description.slice(0, MAX_DESCRIPTION_CHARS) || row.name)}\n---\n\n# ${row.name}\n\n${row.body}\n`;
}

/**
 * One request's catalog: the guide's entries (built once per isolate) and the team's, whose files
 * live in D1 and are read, and hashed, only when a skills method asks for them.
 */
class LedgerSkills implements SkillSource {
  #team: Promise<Array<{ entry: Skill; text: string }>> | undefined;

  constructor(
    private readonly guide: SkillCatalog,
    private readonly files: Record<string, string>,
    private readonly ctx: Ctx,
  ) {}

  private team(): Promise<Array<{ entry: Skill; text: string }>> {
    this.#team ??= listSkills(this.ctx, { projectId: "", status: "active" }, MAX_TEAM_SKILLS).then((rows) => Promise.all(rows.map((row) => this.teamSkill(row))));
    return this.#team;
  }

  private async teamSkill(row: SkillRow): Promise<{ entry: Skill; text: string }> {
    const text = teamSkillFile(row);
    return { entry: await skillEntry(`${TEAM}/${row.slug}`, { "SKILL.md": text }, { baseUri: BASE }), text };
  }

  /** The team skill a path under the catalog names (`team/<slug>/…`), read alone. */
  private async teamSkillAt(path: string): Promise<{ entry: Skill; text: string } | undefined> {
    const [top, slug] = path.split("/");
    if (top !== TEAM || !slug) return undefined;
    const row = await currentSkill(this.ctx, "", slug);
    return row && row.status === "active" ? this.teamSkill(row) : undefined;
  }

  async list(): Promise<{ skills: Skill[] }> {
    return { skills: [...this.guide.entries, ...(await this.team()).map((t) => t.entry)] };
  }

  async get(uri: string): Promise<Skill | undefined> {
    const guide = this.guide.entries.find((e) => e.uri === uri);
    if (guide) return guide;
    const path = pathOf(uri);
    const team = path === undefined ? undefined : await this.teamSkillAt(path);
    return team && team.entry.uri === uri ? team.entry : undefined;
  }

  async read(uri: string): Promise<{ text: string; mimeType: string } | undefined> {
    const path = pathOf(uri);
    if (path === undefined) return undefined;
    const guide = this.files[path];
    if (guide !== undefined) return { text: guide, mimeType: MARKDOWN };
    const team = await this.teamSkillAt(path);
    return team && path === `${TEAM}/${team.entry.frontmatter.name}/SKILL.md` ? { text: team.text, mimeType: MARKDOWN } : undefined;
  }

  async readDirectory(uri: string): Promise<{ resources: Resource[] } | undefined> {
    const dir = pathOf(uri.endsWith("/") ? uri : `${uri}/`);
    if (dir === undefined) return undefined;
    const files: Record<string, string> = { ...this.files };
    if (dir === "" || dir === `${TEAM}/` || dir.startsWith(`${TEAM}/`)) {
      const team = dir.startsWith(`${TEAM}/`) && dir !== `${TEAM}/` ? [await this.teamSkillAt(dir)].filter((t) => t !== undefined) : await this.team();
      for (const t of team) files[`${TEAM}/${t.entry.frontmatter.name}/SKILL.md`] = t.text;
    }
    const children = new Map<string, Resource>();
    for (const [path, text] of Object.entries(files)) {
      if (!path.startsWith(dir)) continue;
      const [name, ...rest] = path.slice(dir.length).split("/");
      const child = `${BASE}${dir}${name}`;
      children.set(
        child,
        rest.length > 0 ? { uri: child, name: name!, mimeType: DIRECTORY_MIME_TYPE } : { uri: child, name: name!, mimeType: MARKDOWN, size: new TextEncoder().encode(text).byteLength },
      );
    }
    return children.size > 0 ? { resources: [...children.values()].sort((a, b) => a.uri.localeCompare(b.uri)) } : undefined;
  }

  async listResources(): Promise<Resource[]> {
    return (await this.list()).skills.map((s) => ({ uri: s.uri, name: s.frontmatter.name, description: s.frontmatter.description, mimeType: MARKDOWN }));
  }
}

/** The path under the catalog's base (`decisions/SKILL.md`), or undefined for a URI outside it. */
const pathOf = (uri: string): string | undefined => (uri.startsWith(BASE) ? uri.slice(BASE.length) : undefined);
