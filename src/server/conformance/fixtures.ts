/**
 * The MCP conformance suite's reference tools, prompts and resources (the names and answers its
 * scenarios ask for), served by this server's own handlers when `fixturesServed` says so
 * (./setting.ts). They hold nothing of a tenant; only the task fixtures store anything (their tasks).
 */
import type { GetPromptResult, InputRequiredResult, Prompt, ServerContext, Tool } from "@modelcontextprotocol/server";
import { invalidInput } from "../../core/errors";
import { CONTENT_PROMPTS, CONTENT_TOOLS } from "./content";
import type { FixtureTool } from "./fixture";
import { getInputRequiredPrompt, INPUT_REQUIRED_PROMPT, INPUT_REQUIRED_TOOLS } from "./input-required";
import { SESSION_ASK_TOOLS } from "./session-asks";
import { TASK_TOOLS } from "./tasks";

export { registerFixtureResources, WATCHED_URI } from "./content";
export { FIXTURE_TASK_DRIVER, fixtureTaskDriver } from "./tasks";

const byName = new Map<string, FixtureTool>([...CONTENT_TOOLS, ...INPUT_REQUIRED_TOOLS, ...SESSION_ASK_TOOLS, ...TASK_TOOLS].map((t) => [t.tool.name, t]));
const TOOLS: Tool[] = [...byName.values()].map((t) => t.tool);

export const fixtureToolListing = (): Tool[] => TOOLS;
export const findFixtureTool = (name: string): FixtureTool | undefined => byName.get(name);

const promptsByName = new Map(CONTENT_PROMPTS.map((p) => [p.prompt.name, p]));

export const fixturePrompts = (): Prompt[] => [...CONTENT_PROMPTS.map((p) => p.prompt), INPUT_REQUIRED_PROMPT];

/** A fixture prompt's answer, or undefined when `name` is not one. */
export function getFixturePrompt(name: string, args: Record<string, string>, sctx: ServerContext): GetPromptResult | InputRequiredResult | undefined {
  if (name === INPUT_REQUIRED_PROMPT.name) return getInputRequiredPrompt(sctx);
  const p = promptsByName.get(name);
  if (!p) return undefined;
  for (const a of p.prompt.arguments ?? []) {
    if (a.required && args[a.name] === undefined) throw invalidInput(`Prompt ${name} needs the argument ${a.name}.`, `Pass ${a.name} in arguments.`);
  }
  return p.get(args);
}
