/** The git toolset (seed 002 over the GitHub API): every tool, in the seed's order. */
import type { AnyToolDef } from "../mcp/define-tool";

export const gitTools: AnyToolDef[] = [];
