/**
 * Every tool of the server is a subcommand: its name (dashes or underscores), its flags read from
 * the input schema the server lists. Nothing here knows any one tool.
 */
import type { Tool } from "@modelcontextprotocol/client";
import { split, toolArguments, typeOf, type JsonSchema } from "./args";
import type { Ledger } from "./connection";
import { printResult, type Out } from "./output";

export const toolName = (word: string): string => word.replace(/-/g, "_");

/** Boolean parameters are bare flags: `--stats` never swallows the next word. */
export function bareFlagsOf(schema: JsonSchema): Set<string> {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(schema.properties ?? {}))
    if (typeOf(v) === "boolean") {
      out.add(k);
      out.add(k.replace(/_/g, "-"));
    }
  return out;
}

export function toolHelp(tool: Tool): string {
  const schema = tool.inputSchema as JsonSchema;
  const required = new Set(schema.required ?? []);
  const lines = [`agent-ledger ${tool.name.replace(/_/g, "-")}${[...required].map((r) => ` <${r}>`).join("")} [flags]`, "", tool.description ?? "", "", "Flags:"];
  for (const [k, v] of Object.entries(schema.properties ?? {})) {
    const type = typeOf(v);
    const shape = type === "boolean" ? "" : type === "array" ? ` <${typeOf(v.items)}>…` : ` <${type}>`;
    const flags = `  --${k.replace(/_/g, "-")}${shape}${required.has(k) ? " (required)" : ""}`;
    lines.push(`${flags.padEnd(34)} ${(v.description ?? "").replace(/\s+/g, " ").slice(0, 200)}`);
  }
  lines.push(`  ${"--args <json|@file|->".padEnd(32)} All arguments as one JSON object (flags override).`, `  ${"--json".padEnd(32)} Print the answer's JSON envelope.`);
  return lines.join("\n");
}

export async function findTool(ledger: Ledger, word: string): Promise<Tool | undefined> {
  const tools = await ledger.listTools();
  return tools.find((t) => t.name === toolName(word)) ?? tools.find((t) => t.name === word);
}

export function closestNames(word: string, names: readonly string[]): string[] {
  const w = toolName(word);
  return names.filter((n) => n.includes(w) || w.includes(n)).slice(0, 5);
}

/** Runs one tool from its command-line words; returns the exit code. */
export async function runTool(ledger: Ledger, tool: Tool, argv: readonly string[], out: Out, stdin: () => Promise<string>): Promise<number> {
  const schema = tool.inputSchema as JsonSchema;
  const words = split(argv, bareFlagsOf(schema));
  const wantsStdin = words.flags.get("args")?.includes("-") ?? false;
  const args = toolArguments(schema, words, wantsStdin ? await stdin() : undefined);
  const { envelope, text } = await ledger.call(tool.name, args);
  return printResult(out, envelope, text);
}
