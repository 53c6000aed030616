import { changeTools } from "../changes/tools";
import { importTools } from "../changes/import";
import {
  attachmentTools,
  collabTools,
  decisionTools,
  feedbackTools,
  handoffTools,
  identityTools,
  kickOutboundHooks,
  knowledgeTools,
  onNoticesDelivered,
  onTaskStatusChange,
  projectTools,
  followTaskReservations,
  repoTools,
  reservationTools,
  runTools,
  searchTools,
  skillTools,
  taskTools,
  webhookTools,
} from "../work";
import { gitTools } from "../git/tools";
import { docsTools } from "../docs";
import { codeTools } from "../code/tools";
import { reviewTools } from "../review";
import { planTools } from "../plans";
import { storyTools } from "../coordination/story";
import { registerCatalog } from "../core/catalog";
import type { Surface } from "../core/context";
import type { AnyToolDef, ToolsetId, ToolsetMeta } from "../core/define-tool";
import { invalidInput } from "../core/errors";
import { listedTool } from "../core/listing";
import { manifestTool } from "./manifest";
import { ringInboxes } from "./inbox-resource";
import { withSeed004Errors } from "./seed004-errors";
import { followTask } from "../plans/progress/engine";

// The default surface stays under the smallest client tool cap we know of (Cursor, 40 tools):
// collab, repos, feedback, skills and runs are opt-in with ?toolsets=… or "all".
export const TOOLSETS: readonly ToolsetMeta[] = [
  {
    id: "changes",
    description: "Change ledger: record what changed and why; blame, history, search, prior attempts, stale decisions.",
    default: true,
  },
  { id: "identity", description: "Who you are and the actor directory: whoami, register_actor, actor_query.", default: true },
  { id: "projects", description: "Projects: create, update, query, and the one-call project brief.", default: true },
  { id: "tasks", description: "Tasks: a dependency graph with a validated state machine, done-gates, and leased claims.", default: true },
  { id: "decisions", description: "Decisions: an append-only log with supersede, status moves and search.", default: true },
  { id: "handoffs", description: "Handoffs between actors (questions, reviews, approvals) and your inbox.", default: true },
  { id: "knowledge", description: "Knowledge notes (notes, runbooks, findings, snippets) with semantic search.", default: true },
  { id: "search", description: "One keyword search across projects, tasks, decisions, notes, comments, handoffs and change events.", default: true },
  { id: "repos", description: "Repositories linked to projects, and the code refs (commits, PRs) that deliver work.", default: false },
  { id: "feedback", description: "File bugs, friction and missing capabilities in this server, and read their outcome.", default: false },
  { id: "skills", description: "Skills: versioned markdown playbooks by slug, tenant-wide or per project.", default: false },
  { id: "collab", description: "Comments with mentions, attachments (links and files), the activity log, and your notifications.", default: false },
  { id: "git", description: "Git on GitHub: status, inventory, parity, log, diff summaries, multi-file commits, merges and cherry-picks through the GitHub API.", default: false },
  {
    id: "docs",
    description: "Document store: content-addressed documents with search, grep, a knowledge graph, collections and snapshots, behind three composite tools (docs_query, docs_execute, docs_session).",
    default: false,
  },
  {
    id: "code",
    description: "Code context over the team's GitHub repositories: indexing on the platform's workflows, semantic and keyword code search, files, symbols and context for a prompt.",
    default: false,
  },
  {
    id: "review",
    description:
      "Code review on GitHub: the deterministic review_diff preflight with SARIF, YAML invariants, secret scrubbing, LLM reviews of diffs and pull requests, GitHub's own check results, and reactive pull-request review sessions.",
    default: false,
  },
  {
    id: "plans",
    description:
      "Plans: write (create_plan, save_plan), refine, approve through the inbox, turn into tasks, track step by step, visualize and execute implementation plans; every version kept, compared and rolled back.",
    default: false,
  },
  { id: "runs", description: "Runs: the tree of sessions and subagents your writes are attributed to; fork, heartbeat, end, query, summarize.", default: false },
  {
    id: "coordination",
    description:
      "Coordination where the write happens: path reservations that commits, merges and cherry-picks through this server respect; overseer messages from the people running it; outgoing webhooks that POST your notifications, signed, to your URL; provenance from one task, path, commit or pull request.",
    default: false,
  },
  {
    id: "imports",
    description:
      "Import history into the change ledger with its original times: change events from any source, and a registered repository's commits through the GitHub API. A re-run imports nothing twice.",
    default: false,
  },
];

/** Seed 004's tool_manifest reads the registry it is part of, at call time. */
const toolManifest = manifestTool({ toolsets: TOOLSETS, select: (surface) => selectTools(surface), listing: (def) => listedTool(def, "lean") });

/** Every tool the server has, grouped by toolset. */
export const ALL_TOOLS: readonly AnyToolDef[] = [
  ...changeTools,
  ...identityTools,
  ...projectTools,
  ...taskTools,
  ...decisionTools,
  ...handoffTools,
  ...knowledgeTools,
  ...collabTools,
  ...attachmentTools,
  ...repoTools,
  ...feedbackTools,
  ...skillTools,
  ...searchTools,
  ...runTools,
  ...reservationTools,
  ...webhookTools,
  ...storyTools,
  ...importTools,
  ...gitTools,
  ...docsTools,
  ...withSeed004Errors([...codeTools, toolManifest, ...reviewTools, ...planTools]),
];

const TOOLS_BY_NAME = new Map(ALL_TOOLS.map((t) => [t.name, t]));

export const findTool = (name: string): AnyToolDef | undefined => TOOLS_BY_NAME.get(name);

// Tools that run another by name (a plan step's task tools) find it through the ground floor.
registerCatalog(findTool);

// A plan step follows its linked task; the tasks room calls out without naming plans.
onTaskStatusChange(followTask);
// A task finished, cancelled or given back lets its reserved paths go.
onTaskStatusChange(followTaskReservations);
// Notices that land ring their recipients' inbox bells (open ledger://inbox subscriptions).
onNoticesDelivered(ringInboxes);
// New notices go out to the outgoing webhooks that cover their recipients.
onNoticesDelivered(kickOutboundHooks);

const TOOLS_BY_SEED_NAME = new Map(ALL_TOOLS.filter((t) => t.seedName).map((t) => [t.seedName!, t]));

/** The tool a seed's name means when no tool has that name (seed 003's `query` is docs_query). */
export const findBySeedName = (name: string): AnyToolDef | undefined => (TOOLS_BY_NAME.has(name) ? undefined : TOOLS_BY_SEED_NAME.get(name));

/** Surfaces already resolved, by their toolsets and mode: every request resolves its surface. Callers name toolsets, so the map is bounded. */
const selections = new Map<string, readonly AnyToolDef[]>();
const SELECTIONS_MAX = 64;

/** The tools a surface exposes (one shared array per surface: read it, do not change it). Unknown toolset names are an error the route reports. */
export function selectTools(surface: Surface): readonly AnyToolDef[] {
  const key = `${surface.readonly ? "r" : "w"}:${surface.toolsets.join(",")}`;
  const hit = selections.get(key);
  if (hit) return hit;
  const tools = resolveSurface(surface);
  if (selections.size >= SELECTIONS_MAX) selections.delete(selections.keys().next().value!);
  selections.set(key, tools);
  return tools;
}

function resolveSurface(surface: Surface): readonly AnyToolDef[] {
  const known = new Set<string>(TOOLSETS.map((t) => t.id));
  const unknown = surface.toolsets.filter((t) => t !== "all" && t !== "default" && !known.has(t));
  if (unknown.length > 0) {
    throw invalidInput(`Unknown toolset${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}.`, `Known toolsets: ${[...known].join(", ")}, or "all".`);
  }
  const wanted = new Set<ToolsetId>();
  const asked = surface.toolsets.length > 0 ? surface.toolsets : ["default"];
  for (const name of asked) {
    for (const t of TOOLSETS) {
      if (name === "all" || name === t.id || (name === "default" && t.default)) wanted.add(t.id);
    }
  }
  return ALL_TOOLS.filter((t) => t.everywhere || (wanted.has(t.toolset) && (!surface.readonly || t.annotations.readOnly)));
}

/** The work ledger's toolsets (seed 001): beside any of them, short names such as `search` or `history` would be ambiguous. */
const WORK_LEDGER_TOOLSETS: ReadonlySet<ToolsetId> = new Set(["identity", "projects", "tasks", "decisions", "handoffs", "knowledge", "search", "repos", "feedback", "skills", "collab", "runs"]);

/** How a surface names its tools: the name each is listed under, and the tool a tools/call name means. */
export interface SurfaceNaming {
  listedName(def: AnyToolDef): string;
  resolve(name: string): AnyToolDef | undefined;
}

/**
 * Seed 000 calls its tools `diff`, `history` and `search`, seed 003 its composites `query`,
 * `execute` and `session`; next to the work ledger those names would be ambiguous (and `search` is
 * taken), so there they are listed as change_diff, docs_query, … . A
 * surface without the work ledger lists the seed's names. Either way a tool keeps one definition:
 * its canonical name always answers, and its seed name answers wherever no listed tool has it.
 */
const namings = new WeakMap<readonly AnyToolDef[], SurfaceNaming>();

export function surfaceNaming(tools: readonly AnyToolDef[]): SurfaceNaming {
  let naming = namings.get(tools);
  if (!naming) {
    naming = nameSurface(tools);
    namings.set(tools, naming);
  }
  return naming;
}

function nameSurface(tools: readonly AnyToolDef[]): SurfaceNaming {
  const seedNames = !tools.some((t) => WORK_LEDGER_TOOLSETS.has(t.toolset));
  const listedName = (def: AnyToolDef) => (seedNames && def.seedName ? def.seedName : def.name);
  const byName = new Map<string, AnyToolDef>();
  for (const t of tools) byName.set(listedName(t), t);
  for (const t of tools) if (!byName.has(t.name)) byName.set(t.name, t);
  for (const t of tools) if (t.seedName && !byName.has(t.seedName)) byName.set(t.seedName, t);
  return { listedName, resolve: (name) => byName.get(name) };
}
