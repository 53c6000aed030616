/**
 * `export`: an entity's history, a changeset, or a project's decisions, as Markdown (to read or to
 * paste into a pull request) or JSON (to keep). Every page is read through the same tools an agent
 * calls, following next_cursor to the end, with progress shown while it reads.
 */
import { writeFile } from "node:fs/promises";
import { takeString, UsageError, type Split } from "../args";
import type { Ledger } from "../connection";
import { EXIT, printError, type Out } from "../output";
import { progress } from "../progress";

type Row = Record<string, unknown>;

/** Pages at most this many times: an export is a document, not a dump of the whole ledger. */
const MAX_PAGES = 100;

const KINDS = {
  entity: { tool: "change_diff", key: "entity_path", pageSize: 1000, title: (v: string) => `History of ${v}` },
  changeset: { tool: "changeset", key: "changeset_id", pageSize: 1000, title: (v: string) => `Changeset ${v}` },
  decisions: { tool: "decision_query", key: "project_id", pageSize: 200, title: (v: string) => `Decisions of ${v}` },
} as const;
type Kind = keyof typeof KINDS;

async function readAll(ledger: Ledger, out: Out, kind: Kind, value: string): Promise<Row[]> {
  const spec = KINDS[kind];
  const bar = progress(out, `export ${kind}`);
  const items: Row[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { envelope } = await ledger.call(spec.tool, { [spec.key]: value, limit: spec.pageSize, ...(cursor ? { cursor } : {}) });
    if (!envelope.ok) throw Object.assign(new Error(envelope.error?.message ?? "export failed"), { envelope });
    items.push(...((envelope.items as Row[]) ?? []));
    bar.update(items.length, 0, `item(s) read, ${page + 1} page(s)`);
    cursor = envelope.next_cursor as string | undefined;
    if (!cursor) break;
  }
  bar.finish(`export ${kind}: ${items.length} item(s)${cursor ? ` (stopped after ${MAX_PAGES} pages)` : ""}`);
  return items;
}

const line = (v: unknown) =>
  String(v ?? "")
    .replace(/\s+/g, " ")
    .trim();
const block = (v: unknown) =>
  String(v ?? "")
    .trim()
    .split("\n")
    .map((l) => `> ${l}`)
    .join("\n");

function eventMarkdown(e: Row): string {
  const head = `### ${e.timestamp} · ${e.change_type} \`${e.entity_path}\``;
  const facts = [
    `by ${e.agent || e.actor}`,
    e.git_commit ? `commit ${String(e.git_commit).slice(0, 12)}` : "",
    e.changeset_id ? `changeset ${e.changeset_id}` : "",
    e.status ? `status ${e.status}` : "",
  ].filter(Boolean);
  const parts = [head, "", facts.join(" · ")];
  if (e.reasoning) parts.push("", block(e.reasoning));
  if (e.diff) parts.push("", "```diff", String(e.diff), "```");
  return parts.join("\n");
}

function decisionMarkdown(d: Row): string {
  const parts = [`### ${line(d.title)} (${d.status})`, "", `${d.created_at} · by ${d.created_by}${d.superseded_by ? ` · superseded by ${d.superseded_by}` : ""}`];
  if (d.choice) parts.push("", `**Choice:** ${line(d.choice)}`);
  if (d.context) parts.push("", `**Context:** ${line(d.context)}`);
  if (d.rationale) parts.push("", `**Why:** ${line(d.rationale)}`);
  for (const o of (d.options as Row[]) ?? []) parts.push(`- ${line(o.label)}: ${line(o.summary)}`);
  return parts.join("\n");
}

export function toMarkdown(kind: Kind, value: string, items: Row[]): string {
  const render = kind === "decisions" ? decisionMarkdown : eventMarkdown;
  return [`# ${KINDS[kind].title(value)}`, "", `${items.length} item(s), exported ${new Date().toISOString()}.`, "", ...items.map(render).flatMap((s) => [s, ""])].join("\n");
}

export async function exportCommand(ledger: Ledger, words: Split, out: Out): Promise<number> {
  const kind = words.positionals.shift() as Kind | undefined;
  const value = words.positionals.shift();
  if (!kind || !(kind in KINDS) || !value)
    throw new UsageError("export needs what to export and which.", "agent-ledger export entity <path> | changeset <id> | decisions <project> [--format md|json] [--out FILE]");
  const format = takeString(words, "format") ?? (out.json ? "json" : "md");
  if (format !== "md" && format !== "json") throw new UsageError(`--format is md or json, not '${format.slice(0, 20)}'.`, "Write --format md or --format json.");
  const file = takeString(words, "out");
  let items: Row[];
  try {
    items = await readAll(ledger, out, kind, value);
  } catch (err) {
    const e = (err as { envelope?: { error?: { code: string; message: string; hint?: string } } }).envelope?.error;
    if (!e) throw err;
    printError(out, e.code, e.message, e.hint);
    return EXIT.toolError;
  }
  const text = format === "json" ? JSON.stringify({ ok: true, kind, [KINDS[kind].key]: value, items }, null, 2) : toMarkdown(kind, value, items);
  if (file) {
    await writeFile(file, `${text}\n`);
    out.stderr(`Wrote ${file}.`);
  } else out.stdout(text);
  return EXIT.ok;
}
